import { createMemoryStore, newResultHandle, type SessionScope, type Store, type StoredResult } from '../../src/store';
import { connectRedis, createRedisStore, sessionKeys, whenReady } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { fresh, OP, stored } from './contract-fixtures';

// F1: a call that began before EndSession and finishes after it writes back only its idempotency
// record; F2: a memory write drops the expired entries, not only hides them.

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.close();
});

async function redisStore(): Promise<Store> {
  const client = connectRedis(redis.url);
  if (!(await whenReady(client, 5000))) throw new Error(`redis at ${redis.url} is not ready`);
  return createRedisStore(client);
}

const stores: Array<[string, () => Promise<Store>]> = [
  ['memory', async () => createMemoryStore()],
  ['redis', redisStore],
];

/** A new turn's scope object for the same session: what a Dispatch after the end passes. */
const again = (scope: SessionScope): SessionScope => ({ ...scope });

describe.each(stores)('a call finishing after EndSession (%s store)', (_name, make) => {
  let store: Store;
  beforeAll(async () => {
    store = await make();
  });
  afterAll(async () => {
    await store?.close();
  });

  test('writes no memory, spilled result or loop record; its side-effecting retry is replayed', async () => {
    const scope = fresh();
    const handle = newResultHandle(scope.sessionId);
    const result: StoredResult = { ...stored('cut'), truncated: true, resultHandle: handle };
    const begun = await store.beginAttempt({ scope, op: OP, claim: { key: 'k', leaseMs: 10_000, owner: 'o1' } });
    expect(begun.claim?.state).toBe('claimed');
    await store.endSession(scope);
    const after = await store.finishAttempt({
      scope,
      op: OP,
      record: { result: 'same', failed: false, window: 100 },
      idempotency: { key: 'k', action: 'complete', result, ttlSeconds: 3600, owner: 'o1' },
      spill: { handle, text: 'the whole secret text', ttlSeconds: 3600 },
      memory: { entry: 'secret memory', max: 200, ttlSeconds: 86_400 },
    });
    expect(after.spillRefused).toBe(true);
    const next = again(scope);
    expect(await store.memory(next)).toEqual([]);
    expect(await store.readResult(scope.tenant, handle)).toBeUndefined();
    expect(await store.readResultPage(scope.tenant, handle, 0, 100)).toBeUndefined();
    // The retry (a new turn) is replayed from the record, which names no handle ReadResult would not find.
    const retry = await store.beginAttempt({ scope: next, op: OP, claim: { key: 'k', leaseMs: 10_000, owner: 'o2' } });
    expect(retry.claim?.state).toBe('completed');
    expect(retry.claim?.state === 'completed' && retry.claim.result.resultHandle).toBe('');
    expect(retry.claim?.state === 'completed' && retry.claim.result.output).toBe('cut');
    // The loop window is empty: the late record is not there.
    expect(retry.streak.count).toBe(0);
  });

  test('a read-only call of a turn begun before the end writes nothing back; a new turn of the same session id writes as before', async () => {
    const scope = fresh();
    await store.beginAttempt({ scope, op: OP });
    await store.endSession(scope);
    await store.finishAttempt({ scope, op: OP, record: { result: 'r', failed: false, window: 100 }, memory: { entry: 'late', max: 200, ttlSeconds: 86_400 } });
    const next = again(scope);
    expect(await store.memory(next)).toEqual([]);
    const begun = await store.beginAttempt({ scope: next, op: OP });
    expect(begun.streak.count).toBe(0);
    const handle = newResultHandle(scope.sessionId);
    const after = await store.finishAttempt({ scope: next, op: OP, record: { result: 'r', failed: false, window: 100 }, spill: { handle, text: 'whole', ttlSeconds: 60 }, memory: { entry: 'new', max: 200, ttlSeconds: 86_400 } });
    expect(after.spillRefused).toBeUndefined();
    expect(after.streak.count).toBe(1);
    expect(await store.memory(next)).toEqual(['new']);
    expect(await store.readResult(scope.tenant, handle)).toBe('whole');
  });
});

describe('expired memory entries are removed by the next write', () => {
  test('memory store (its clock injected)', async () => {
    let t = Date.parse('2024-01-01T00:00:00Z');
    const store = createMemoryStore({ now: () => t });
    const scope = fresh();
    await store.finishAttempt({ scope, op: OP, memory: { entry: 'old', max: 200, ttlSeconds: 86_400 } });
    t += 25 * 3_600_000;
    expect(await store.memory(scope)).toEqual([]);
    await store.finishAttempt({ scope, op: OP, memory: { entry: 'new', max: 200, ttlSeconds: 86_400 } });
    // Back to when the old entry was live: only a removed entry stays away.
    t -= 24 * 3_600_000;
    expect(await store.memory(scope)).toEqual(['new']);
    await store.close();
  });

  test('redis store (an entry written 25 h ago in its format)', async () => {
    const store = await redisStore();
    const scope = fresh();
    const key = sessionKeys(scope).memory;
    const expiredAt = Date.now() - 3_600_000; // written 25 h ago, for 24 h
    redis.cli('rpush', key, `${expiredAt - 10}:older`, `${expiredAt}:old`);
    await store.finishAttempt({ scope, op: OP, memory: { entry: 'new', max: 200, ttlSeconds: 86_400 } });
    const held = redis.cli('lrange', key, '0', '-1').split('\n').filter(Boolean);
    expect(held).toHaveLength(1);
    expect(held[0]).toMatch(/^\d+:new$/);
    await store.close();
  });
});

test('redis: EndSession leaves only its end mark in the session hash tag, for 24 h', async () => {
  const store = await redisStore();
  const scope = { tenant: 'acme}{:', sessionId: `chat:{${Date.now()}}` };
  await store.beginAttempt({ scope, op: OP });
  await store.finishAttempt({ scope, op: OP, record: { result: 'h', failed: false, window: 100 }, memory: { entry: 'm', max: 10, ttlSeconds: 60 } });
  await store.endSession(scope);
  const tag = `{${Buffer.from(scope.tenant).toString('base64url')}:${Buffer.from(scope.sessionId).toString('base64url')}}`;
  const keys = redis.cli('--scan', '--pattern', `dispatch:${tag.replace(/[{}]/g, '\\$&')}:*`).split('\n').filter(Boolean);
  expect(keys).toEqual([sessionKeys(scope).ended]);
  const pttl = Number(redis.cli('pttl', keys[0]!));
  expect(pttl).toBeGreaterThan(86_300_000);
  expect(pttl).toBeLessThanOrEqual(86_400_000);
  await store.close();
});
