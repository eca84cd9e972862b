import { parseConfig } from '../../src/config';
import { randomUUID } from 'node:crypto';
import { SILENT_LOGGER, type Logger } from '../../src/log';
import { fullTextNotKeptWarning, newResultHandle, type SessionScope, type StoredResult } from '../../src/store';
import { connectRedis, createRedisStore, sessionKeys, whenReady, type RedisStore, type RedisStoreOptions } from '../../src/store/redis';
import { resolveSpillLimits } from '../../src/store/redis/spill-limits';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// Spilled results (the whole texts behind result handles) never take the room idempotency claims
// need: a Redis with maxmemory and noeviction refuses every write once full, and side-effecting
// calls then fail closed. A spill is refused past a share of maxmemory, past a size, and lives at
// most maxSpillTtlSeconds.

jest.setTimeout(60_000);

const fresh = (): SessionScope => ({ tenant: 't', sessionId: `s-${randomUUID()}` });
const cut = (handle: string): StoredResult => ({ output: 'head [cut] tail', isError: false, resolvedToolName: 'fetch', truncated: true, resultHandle: handle, durationMs: 1 });
const MIB = 1024 * 1024;

let redis: TestRedis;
const stores: RedisStore[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true, extraArgs: ['--maxmemory', '20mb', '--maxmemory-policy', 'noeviction'] });
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await redis?.close();
});

async function storeWith(options: RedisStoreOptions = {}, user?: string): Promise<RedisStore> {
  const url = user ? redis.url.replace('redis://', `redis://${user}:pw@`) : redis.url;
  const client = connectRedis(url, { commandTimeoutMs: 5000 });
  await whenReady(client, 5000);
  const store = createRedisStore(client, { timeoutMs: 5000, ...options });
  stores.push(store);
  return store;
}

/** A completed side-effecting call whose bounded result spills `text`; true when the spill was kept. */
async function spill(store: RedisStore, scope: SessionScope, key: string, text: string, ttlSeconds = 3600): Promise<{ kept: boolean; handle: string }> {
  const handle = newResultHandle(scope.sessionId);
  expect((await store.beginAttempt({ scope, op: key, claim: { key, leaseMs: 30_000, owner: key } })).claim).toEqual({ state: 'claimed' });
  const after = await store.finishAttempt({ scope, op: key, record: { result: key, failed: false, window: 100 }, idempotency: { key, action: 'complete', result: cut(handle), ttlSeconds }, spill: { handle, text, ttlSeconds } });
  const stored = await store.readResult(scope.tenant, handle);
  expect(after.spillRefused === true).toBe(stored === undefined);
  return { kept: stored === text, handle };
}

/** The result an identical call replays. */
async function replayOf(store: RedisStore, scope: SessionScope, key: string): Promise<StoredResult | undefined> {
  const claim = (await store.beginAttempt({ scope, op: key, claim: { key, leaseMs: 30_000, owner: 'again' } })).claim;
  return claim?.state === 'completed' ? claim.result : undefined;
}

test('spills stop at their share of maxmemory: a side-effecting claim still gets in, and a refused spill replays without its handle', async () => {
  const store = await storeWith();
  const scope = fresh();
  const kept: boolean[] = [];
  let refused: { handle: string; key: string } | undefined;
  for (let i = 0; i < 40; i++) {
    const key = `big${i}`;
    const done = await spill(store, scope, key, `${i}:`.padEnd(MIB, 'x'));
    kept.push(done.kept);
    if (!done.kept) refused ??= { handle: done.handle, key };
  }
  // Some were kept, then none: 40 MiB would not fit in 20 MB.
  expect(kept[0]).toBe(true);
  expect(kept.slice(-10)).toEqual(Array(10).fill(false));
  const used = Number(/\nused_memory:(\d+)/.exec(redis.cli('INFO', 'memory'))![1]);
  expect(used).toBeLessThan(0.5 * 20 * MIB + 2 * MIB);
  expect(await replayOf(store, scope, refused!.key)).toEqual({ ...cut(refused!.handle), resultHandle: '', warnings: [fullTextNotKeptWarning(MIB)] });
  expect(await replayOf(store, scope, 'big0')).toMatchObject({ resultHandle: expect.stringMatching(/./) });
  // The side-effecting call of another session claims, and its completion is kept.
  const other = fresh();
  expect((await store.beginAttempt({ scope: other, op: 'pay', claim: { key: 'pay', leaseMs: 30_000, owner: 'o' } })).claim).toEqual({ state: 'claimed' });
  await store.finishAttempt({ scope: other, op: 'pay', idempotency: { key: 'pay', action: 'complete', result: { ...cut(''), truncated: false, output: 'paid' }, ttlSeconds: 3600 } });
  expect(await replayOf(store, other, 'pay')).toMatchObject({ output: 'paid' });
  await store.endSession(scope);
});

test('a spill longer than maxSpillBytes (UTF-8) is refused; one at the limit is kept', async () => {
  const store = await storeWith({ maxSpillBytes: 1000 });
  const scope = fresh();
  expect(await spill(store, scope, 'ascii', 'x'.repeat(1000))).toMatchObject({ kept: true });
  const long = await spill(store, scope, 'accents', 'é'.repeat(501));
  expect(long.kept).toBe(false);
  expect(await replayOf(store, scope, 'accents')).toEqual({ ...cut(long.handle), resultHandle: '', warnings: [fullTextNotKeptWarning(501)] });
  await store.endSession(scope);
});

test('by default a spill lives its tool\'s TTL, as its idempotency record does (DESIGN section 11)', async () => {
  const store = await storeWith();
  const scope = fresh();
  const { handle } = await spill(store, scope, 'k', 'whole text', 3600);
  const keys = sessionKeys(scope);
  expect(Number(redis.cli('TTL', keys.result(handle)).trim())).toBeGreaterThan(3600 - 30);
  expect(Number(redis.cli('TTL', keys.record('k')).trim())).toBeGreaterThan(3600 - 30);
  await store.endSession(scope);
});

test('a spill lives at most maxSpillTtlSeconds when set, its idempotency record its own TTL', async () => {
  const store = await storeWith({ maxSpillTtlSeconds: 900 });
  const scope = fresh();
  const { handle } = await spill(store, scope, 'k', 'whole text', 3600);
  const keys = sessionKeys(scope);
  const spillTtl = Number(redis.cli('TTL', keys.result(handle)).trim());
  expect(spillTtl).toBeGreaterThan(900 - 30);
  expect(spillTtl).toBeLessThanOrEqual(900);
  expect(Number(redis.cli('TTL', keys.record('k')).trim())).toBeGreaterThan(3600 - 30);
  // A tool TTL shorter than the limit is kept as it is.
  const short = await spill(store, scope, 'short', 'whole text', 120);
  expect(Number(redis.cli('TTL', keys.result(short.handle)).trim())).toBeLessThanOrEqual(120);
  await store.endSession(scope);
});

test('with INFO denied to its user (an ACL), no spill is kept and the store says why, once', async () => {
  redis.cli('ACL', 'SETUSER', 'noinfo', 'on', '>pw', '~*', '&*', '+@all', '-info');
  // ioredis's ready check warns that it cannot run INFO either.
  jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  const warnings: string[] = [];
  const logger: Logger = { ...SILENT_LOGGER, warn: (message) => void warnings.push(message) };
  const store = await storeWith({ logger }, 'noinfo');
  const scope = fresh();
  expect((await spill(store, scope, 'a', 'whole text')).kept).toBe(false);
  expect((await spill(store, scope, 'b', 'whole text')).kept).toBe(false);
  expect(warnings.filter((w) => w.includes('refused INFO'))).toHaveLength(1);
  await store.endSession(scope);
});

test('spill limits are checked, with exact messages', () => {
  expect(resolveSpillLimits()).toEqual({ spillMemoryShare: 0.5, maxSpillBytes: 8 * MIB, maxSpillTtlSeconds: 0 });
  expect(() => resolveSpillLimits({ spillMemoryShare: 0 })).toThrow('spillMemoryShare must be a number above 0 and at most 1, got 0');
  expect(() => resolveSpillLimits({ spillMemoryShare: 1.5 })).toThrow('spillMemoryShare must be a number above 0 and at most 1, got 1.5');
  expect(() => resolveSpillLimits({ maxSpillBytes: 0.5 })).toThrow('maxSpillBytes must be a positive integer, got 0.5');
  expect(() => resolveSpillLimits({ maxSpillTtlSeconds: -1 })).toThrow('maxSpillTtlSeconds must be a non-negative integer, got -1');
});

test('the config file sets the spill limits under redis:, with or without its url', () => {
  const config = (redis: string) => parseConfig(`redis: ${redis}\ntools: []\n`, 'test.yaml');
  expect(config('{ spill_memory_share: 0.25, max_spill_bytes: 1048576, max_spill_ttl_seconds: 600 }').redisSpill).toEqual({ spillMemoryShare: 0.25, maxSpillBytes: 1048576, maxSpillTtlSeconds: 600 });
  expect(config('{ url: "redis://r:6379", max_spill_bytes: 1000 }')).toMatchObject({ redisUrl: 'redis://r:6379', redisSpill: { maxSpillBytes: 1000 } });
  expect(() => config('{ spill_memory_share: 2 }')).toThrow('test.yaml: redis.spill_memory_share: must be a number above 0 and at most 1, got 2');
  expect(() => config('{ max_spill_ttl_seconds: -5 }')).toThrow('test.yaml: redis.max_spill_ttl_seconds: must be a non-negative integer, got -5');
  expect(() => config('{ spill_share: 1 }')).toThrow('test.yaml: redis.spill_share: unknown key "spill_share" (did you mean spill_memory_share?)');
  expect(() => config('{}')).toThrow('test.yaml: redis.url: must be a Redis URL');
});
