import { connectRedis, createRedisStore, whenReady } from '../../src/store/redis';
import { startRedis, startSentinel, type TestRedis, type TestSentinel } from '../helpers/redis-server';

let master: TestRedis;
let sentinel: TestSentinel;
beforeAll(async () => {
  master = await startRedis({ own: true });
  sentinel = await startSentinel(master.port, 'dispatch-master');
});
afterAll(async () => {
  await sentinel?.close();
  await master?.close();
});

test('a redis-sentinel:// URL finds the master through the sentinel', async () => {
  const client = connectRedis(`redis-sentinel://127.0.0.1:${sentinel.port}/dispatch-master`);
  expect(await whenReady(client, 5000)).toBe(true);
  const store = createRedisStore(client);
  try {
    const scope = { tenant: 't', sessionId: 's' };
    expect((await store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 5000 } })).claim).toEqual({ state: 'claimed' });
    expect((await store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 5000 } })).claim).toEqual({ state: 'in_progress' });
    expect(master.cli('--scan', '--pattern', 'dispatch:*:idem:k').trim()).toMatch(/^dispatch:\{dA:cw\}:idem:k$/);
  } finally {
    await store.close();
  }
});
