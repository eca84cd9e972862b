import { randomUUID } from 'node:crypto';
import type { SessionScope } from '../../src/store';
import { connectRedis, createRedisStore, whenReady, type RedisStore } from '../../src/store/redis';
import { monitorRedis, startRedis, type TestRedis } from '../helpers/redis-server';

const result = { output: 'ok', isError: false, resolvedToolName: 'send', truncated: false, resultHandle: '', durationMs: 1 };
const fresh = (): SessionScope => ({ tenant: `t-${randomUUID()}`, sessionId: `s-${randomUUID()}` });

// The attempt's two scripts are sent by the store's own command (script-command.ts), not
// ioredis's defineCommand: it must still load them on a new connection and again after Redis lost them.
describe('redis store: the attempt scripts and Redis script cache', () => {
  let redis: TestRedis;
  let store: RedisStore;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    const client = connectRedis(redis.url, {});
    await whenReady(client, 5000);
    store = createRedisStore(client, {});
  });
  afterAll(async () => {
    await store?.close();
    await redis?.close();
  });

  const attempt = async (scope: SessionScope, key: string) => {
    const begun = await store.beginAttempt({ scope, op: 'send\u0000{}', claim: { key, leaseMs: 5000, owner: key } });
    const finished = await store.finishAttempt({ scope, op: 'send\u0000{}', record: { result: 'ok', failed: false, window: 10 }, idempotency: { key, action: 'complete', result, ttlSeconds: 60 } });
    return { claim: begun.claim, streak: finished.streak };
  };

  test('each script goes as EVAL on a new connection, then EVALSHA, and as EVAL again once SCRIPT FLUSH emptied the cache', async () => {
    const scope = fresh();
    let monitor = await monitorRedis(redis.port);
    expect(await attempt(scope, 'a')).toEqual({ claim: { state: 'claimed' }, streak: { count: 1, failed: false } });
    expect(await attempt(scope, 'b')).toEqual({ claim: { state: 'claimed' }, streak: { count: 2, failed: false } });
    // MONITOR's lines may come after the replies: wait for the four.
    for (let i = 0; i < 100 && monitor.commands().filter((c) => c.startsWith('eval')).length < 4; i++) await new Promise((r) => setTimeout(r, 20));
    monitor.stop();
    expect(monitor.commands().filter((c) => c.startsWith('eval'))).toEqual(['eval', 'eval', 'evalsha', 'evalsha']);

    const admin = connectRedis(redis.url, {});
    await whenReady(admin, 5000);
    await admin.script('FLUSH');
    admin.disconnect();
    monitor = await monitorRedis(redis.port);
    expect(await attempt(scope, 'c')).toEqual({ claim: { state: 'claimed' }, streak: { count: 3, failed: false } });
    expect((await store.beginAttempt({ scope, op: 'send\u0000{}', claim: { key: 'a', leaseMs: 5000 } })).claim).toEqual({ state: 'completed', result });
    for (let i = 0; i < 100 && monitor.commands().length < 5; i++) await new Promise((r) => setTimeout(r, 20));
    monitor.stop();
    expect(monitor.commands()).toEqual(['evalsha', 'eval', 'evalsha', 'eval', 'evalsha']);
  });
});
