import { execFileSync } from 'node:child_process';
import { connectRedis, createRedisStore, whenReady } from '../../src/store/redis';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { describeStoreContract, redisContractOptions } from './store-contract';

jest.setTimeout(60_000);

let cluster: TestRedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
});
afterAll(async () => {
  await cluster?.close();
});

describeStoreContract(
  'redis (cluster of three masters)',
  async (options) => {
    const client = connectRedis(cluster.url);
    if (!(await whenReady(client, 10_000))) throw new Error(`redis cluster at ${cluster.url} is not ready`);
    return createRedisStore(client, { ...redisContractOptions(options), connectSubscriber: () => connectRedis(cluster.url, { queueWhileDown: true }) });
  },
  { shared: true },
);

test('sessions spread over the masters, all keys of a session on one master', async () => {
  const client = connectRedis(cluster.url);
  await whenReady(client, 10_000);
  const store = createRedisStore(client);
  const tenant = `spread-${Date.now()}`;
  try {
    for (let i = 0; i < 30; i++) {
      await store.finishAttempt({ scope: { tenant, sessionId: `s${i}` }, op: 'o', record: { result: 'h', failed: false, window: 10 }, memory: { entry: 'm', max: 5, ttlSeconds: 60 } });
    }
    const tag = Buffer.from(tenant).toString('base64url');
    const nodeOf = new Map<string, number[]>();
    for (const port of cluster.ports) {
      const keys = execFileSync('redis-cli', ['-p', String(port), '--scan', '--pattern', `dispatch:{${tag}:*`], { encoding: 'utf8' }).split('\n').filter(Boolean);
      for (const key of keys) {
        const session = key.slice(0, key.indexOf('}'));
        nodeOf.set(session, [...(nodeOf.get(session) ?? []), port]);
      }
    }
    expect(nodeOf.size).toBe(30);
    for (const ports of nodeOf.values()) expect(ports).toEqual([ports[0], ports[0]]);
    expect(new Set([...nodeOf.values()].map((p) => p[0])).size).toBe(3);
  } finally {
    await store.close();
  }
});
