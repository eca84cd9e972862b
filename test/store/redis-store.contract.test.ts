import { connectRedis, createRedisStore, whenReady } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { describeStoreContract, redisContractOptions } from './store-contract';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.close();
});

describeStoreContract(
  'redis (standalone)',
  async (options) => {
    const client = connectRedis(redis.url);
    if (!(await whenReady(client, 5000))) throw new Error(`redis at ${redis.url} is not ready`);
    return createRedisStore(client, { ...redisContractOptions(options), connectSubscriber: () => connectRedis(redis.url, { queueWhileDown: true }) });
  },
  { shared: true },
);
