import { randomUUID } from 'node:crypto';
import { createMemoryStore, newResultHandle, type SessionScope, type Store } from '../../src/store';
import { connectRedis, createRedisStore, whenReady } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { OP, stored } from './contract-fixtures';

// Found in review: past its per-session cap the Redis store deleted the records (and spills) that
// expire first, and the one just written was among them when its tool's TTL was shorter than the
// others': a side-effecting call's completion was gone at once (its retry ran the tool again) and
// a bounded result named a handle ReadResult could not find. The memory store drops the oldest.

jest.setTimeout(30_000);

const fresh = (): SessionScope => ({ tenant: 't', sessionId: `s-${randomUUID()}` });

let redis: TestRedis;
const stores: Record<string, Store> = {};
beforeAll(async () => {
  redis = await startRedis({ own: true });
  const client = connectRedis(redis.url, { commandTimeoutMs: 5000 });
  await whenReady(client, 5000);
  stores.redis = createRedisStore(client, { timeoutMs: 5000, maxRecordsPerSession: 3, maxResultsPerSession: 2 });
  stores.memory = createMemoryStore({ maxRecordsPerSession: 3, maxResultsPerSession: 2 });
});
afterAll(async () => {
  await Promise.all(Object.values(stores).map((s) => s.close()));
  await redis?.close();
});

describe.each(['memory', 'redis'])('%s store', (kind) => {
  test('a completion just written with a shorter TTL than the session\'s others is kept past the cap on records', async () => {
    const store = stores[kind]!;
    const scope = fresh();
    const begin = async (key: string) => (await store.beginAttempt({ scope, op: OP, claim: { key, leaseMs: 10_000, owner: key } })).claim;
    const done = (key: string, ttlSeconds: number) => store.finishAttempt({ scope, op: OP, idempotency: { key, action: 'complete', result: stored(key), ttlSeconds } });
    for (const key of ['a', 'b', 'c']) {
      await begin(key);
      await done(key, 3600);
    }
    expect(await begin('brief')).toEqual({ state: 'claimed' });
    await done('brief', 60);
    // The call's retry replays it: the side effect does not run again.
    expect(await begin('brief')).toEqual({ state: 'completed', result: stored('brief') });
  });

  test('a spill just written with a shorter TTL than the session\'s others is kept past the cap on results', async () => {
    const store = stores[kind]!;
    const scope = fresh();
    for (const text of ['one', 'two']) await store.finishAttempt({ scope, op: OP, spill: { handle: newResultHandle(scope.sessionId), text, ttlSeconds: 3600 } });
    const handle = newResultHandle(scope.sessionId);
    const finished = await store.finishAttempt({ scope, op: OP, spill: { handle, text: 'brief', ttlSeconds: 60 } });
    expect(finished.spillRefused).toBeUndefined();
    expect(await store.readResult(scope.tenant, handle)).toBe('brief');
  });
});
