import { createHash, randomUUID } from 'node:crypto';
import { shortHash } from '../../src/json';
import { fullTextNotKeptWarning, newResultHandle, StoreUnavailableError, type SessionScope } from '../../src/store';
import { connectRedis, createRedisStore, sessionKeys, whenReady, type RedisStore, type RedisStoreOptions } from '../../src/store/redis';
import { freeRedisPort, monitorRedis, startRedis, type TestRedis } from '../helpers/redis-server';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fresh = (): SessionScope => ({ tenant: `t-${randomUUID()}`, sessionId: `s-${randomUUID()}` });
const result = { output: 'ok', isError: false, resolvedToolName: 'send', truncated: false, resultHandle: '', durationMs: 1 };

async function storeOn(url: string, options: RedisStoreOptions = {}): Promise<RedisStore> {
  const client = connectRedis(url, { commandTimeoutMs: options.timeoutMs });
  await whenReady(client, 5000);
  return createRedisStore(client, options);
}

async function expectUnavailableWithin(step: Promise<unknown>, ms: number): Promise<void> {
  const started = Date.now();
  await expect(step).rejects.toBeInstanceOf(StoreUnavailableError);
  expect(Date.now() - started).toBeLessThan(ms);
}

describe('redis store', () => {
  let redis: TestRedis;
  let store: RedisStore;
  beforeAll(async () => {
    redis = await startRedis({ own: true, persistence: 'aof-always' });
    store = await storeOn(redis.url, { maxRecordsPerSession: 3, timeoutMs: 400, pendingRetryMs: 100 });
  });
  afterAll(async () => {
    await store?.close();
    await redis?.close();
  });

  test('each step is one round trip: EVALSHA for the start and the finish of an attempt and for a ReadResult page', async () => {
    const scope = fresh();
    await store.beginAttempt({ scope, op: 'warm', claim: { key: 'warm', leaseMs: 1000 } });
    await store.finishAttempt({ scope, op: 'warm', idempotency: { key: 'warm', action: 'release' } });
    await store.readResultPage(scope.tenant, newResultHandle(scope.sessionId), 0, 10);
    const monitor = await monitorRedis(redis.port);
    for (let i = 0; i < 10; i++) {
      await store.beginAttempt({ scope, op: `op${i}`, claim: { key: `k${i}`, leaseMs: 5000 } });
      await store.finishAttempt({ scope, op: `op${i}`, record: { result: 'h', failed: false, window: 100 }, idempotency: { key: `k${i}`, action: 'complete', result, ttlSeconds: 60 }, spill: { handle: newResultHandle(scope.sessionId), text: 'long', ttlSeconds: 60 }, memory: { entry: 'm', max: 10, ttlSeconds: 60 } });
    }
    await store.readResultPage(scope.tenant, newResultHandle(scope.sessionId), 0, 10);
    await sleep(50);
    monitor.stop();
    expect(monitor.commands()).toEqual(Array(21).fill('evalsha'));
  });

  test('loop-window ops are stored under the hash of their first format, so replicas of the previous version share windows', async () => {
    const scope = fresh();
    await store.finishAttempt({ scope, op: 'search\u0000{"q":"x"}', record: { result: 'found', failed: false, window: 100 } });
    const client = connectRedis(redis.url, {});
    await whenReady(client, 5000);
    try {
      const first = createHash('sha256').update(`search\u0000${shortHash('{"q":"x"}')}`).digest('base64url');
      // Then when it was recorded and when the wait it told ends (0: none), after an '@'.
      const [entry] = await client.lrange(sessionKeys(scope).window, 0, -1);
      expect(entry).toMatch(new RegExp(`^${first}0${shortHash('found')}@\\d{13}/0$`));
      // An entry of the previous version (no times) still counts toward its op's streak.
      await client.lpush(sessionKeys(scope).window, `${first}0${shortHash('found')}`);
      expect((await store.beginAttempt({ scope, op: 'search\u0000{"q":"x"}' })).streak).toEqual({ count: 2, failed: false });
    } finally {
      client.disconnect();
    }
  });

  test("during a rolling upgrade an older replica's entry (no times) was recorded when the window's newest entry with times was", async () => {
    const scope = fresh();
    const op = 'lookup\u0000{"q":"x"}';
    const fail = (window = 100) => store.finishAttempt({ scope, op, record: { result: 'bad', failed: true, window } });
    const client = connectRedis(redis.url, {});
    await whenReady(client, 5000);
    try {
      const key = sessionKeys(scope).window;
      await fail();
      const [entry] = await client.lrange(key, 0, 0);
      const old = entry!.split('@')[0]!;
      // A 400 hammered through a new and an old replica in turn: the old one's entries are the newest.
      for (let i = 0; i < 2; i++) {
        await fail();
        await client.lpush(key, old);
      }
      const mixed = (await store.beginAttempt({ scope, op })).streak;
      expect(mixed).toEqual({ count: 5, failed: true, sinceMs: expect.any(Number) });
      expect(mixed.sinceMs).toBeLessThan(5_000);
      // Only entries without times: as recorded long ago (the block of an older replica ends).
      const other = fresh();
      for (let i = 0; i < 5; i++) await client.lpush(sessionKeys(other).window, old);
      expect((await store.beginAttempt({ scope: other, op })).streak.sinceMs).toBeGreaterThan(1e12);
    } finally {
      client.disconnect();
    }
  });

  test("a malformed window entry ('@' without '/') is read (its time, 0 when none; no wait), not a script error on every call of its op", async () => {
    const scope = fresh();
    const op = 'lookup\u0000{"q":"y"}';
    const fail = () => store.finishAttempt({ scope, op, record: { result: 'bad', failed: true, window: 100 } });
    const client = connectRedis(redis.url, {});
    await whenReady(client, 5000);
    try {
      await fail();
      const key = sessionKeys(scope).window;
      const old = (await client.lrange(key, 0, 0))[0]!.split('@')[0]!;
      await client.lpush(key, `${old}@123`, `${old}@`);
      expect((await store.beginAttempt({ scope, op })).streak).toEqual({ count: 3, failed: true, sinceMs: expect.any(Number) });
      expect((await fail()).streak.count).toBe(4);
    } finally {
      client.disconnect();
    }
  });

  test("a retry's record keeps its wait for an older version's parser too (a rolling upgrade): the old session-lib.lua reads the same end", async () => {
    const scope = fresh();
    const op = 'busy\u0000{"q":1}';
    await store.finishAttempt({ scope, op, record: { result: 'slow', failed: true, window: 100, waitMs: 20_000 } });
    await store.finishAttempt({ scope, op, record: { result: 'slow', failed: true, window: 100, waitMs: 20_000, retry: true } });
    const client = connectRedis(redis.url, {});
    await whenReady(client, 5000);
    try {
      const key = sessionKeys(scope).window;
      // The window entry parser of 26fe359 (before the retry mark), as its replicas run it.
      const oldParse = `
        local entry = KEYS[1]
        local len = tonumber(ARGV[1])
        local h = string.sub(entry, len + 2)
        local cut = string.find(h, '@', 1, true)
        local times = string.sub(h, cut + 1)
        local slash = string.find(times, '/', 1, true)
        return {tonumber(string.sub(times, 1, slash - 1)) or 0, tonumber(string.sub(times, slash + 1)) or 0}`;
      const [retried, first] = await client.lrange(key, 0, 1);
      const id = first!.split('@')[0]!.length - 1 - shortHash('slow').length;
      const [, oldEnds] = (await client.eval(oldParse, 1, retried!, id)) as [number, number];
      const [, firstEnds] = (await client.eval(oldParse, 1, first!, id)) as [number, number];
      expect(oldEnds).toBeGreaterThan(Date.now() + 15_000);
      expect(Math.abs(oldEnds - firstEnds)).toBeLessThan(5_000);
      // The new parser still reads it as a retry's: one answer to call again later, not two.
      expect((await store.beginAttempt({ scope, op })).streak).toMatchObject({ toldRun: 1, waitMs: expect.any(Number) });
      // An entry written as 45ace23's builds did ('/r' after its end) is a retry's too.
      await client.lpush(key, retried!.replace(/\/\+(\d+)$/, '/$1/r'));
      expect((await store.beginAttempt({ scope, op })).streak).toMatchObject({ toldRun: 1 });
    } finally {
      client.disconnect();
    }
  });

  test('while replies are awaited, the steps issued in one tick leave in one socket write, and each gets its own answer', async () => {
    const client = connectRedis(redis.url, {});
    await whenReady(client, 5000);
    const own = createRedisStore(client);
    try {
      const stream = (client as unknown as { stream: { _writev: (chunks: unknown[], cb: unknown) => void } }).stream;
      const writev = stream._writev.bind(stream);
      const batches: number[] = [];
      stream._writev = (chunks, cb) => (batches.push(chunks.length), writev(chunks, cb));
      const scope = fresh();
      const first = own.beginAttempt({ scope, op: 'first', claim: { key: 'first', leaseMs: 5000 } });
      const rest = Array.from({ length: 10 }, (_, i) => own.beginAttempt({ scope, op: `op${i}`, claim: { key: `k${i % 5}`, leaseMs: 5000 } }));
      expect((await first).claim).toEqual({ state: 'claimed' });
      const claims = (await Promise.all(rest)).map((r) => r.claim?.state);
      expect(claims).toEqual([...Array(5).fill('claimed'), ...Array(5).fill('in_progress')]);
      expect(batches).toEqual([10]);
    } finally {
      await own.close();
    }
  });

  test('every key is namespaced under the session hash tag and expires', async () => {
    const scope = { tenant: 'acme}{:', sessionId: 'chat:{42}' };
    await store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 5000 } });
    await store.finishAttempt({ scope, op: 'o', record: { result: 'h', failed: false, window: 100 }, idempotency: { key: 'k', action: 'complete', result, ttlSeconds: 60 }, spill: { handle: newResultHandle(scope.sessionId), text: 'long', ttlSeconds: 60 }, memory: { entry: 'm', max: 10, ttlSeconds: 60 } });
    const tag = `{${Buffer.from(scope.tenant).toString('base64url')}:${Buffer.from(scope.sessionId).toString('base64url')}}`;
    const keys = redis.cli('--scan', '--pattern', `dispatch:${tag.replace(/[{}]/g, '\\$&')}:*`).split('\n').filter(Boolean).sort();
    expect(keys.map((k) => k.slice(`dispatch:${tag}:`.length).replace(/:.*/, ''))).toEqual(['idem', 'memory', 'records', 'result', 'results', 'window']);
    for (const key of keys) expect(Number(redis.cli('pttl', key))).toBeGreaterThan(0);
    await store.endSession(scope);
    // Only the session's end mark stays, and it expires too (a call begun before the end writes nothing back).
    expect(redis.cli('--scan', '--pattern', `dispatch:${tag.replace(/[{}]/g, '\\$&')}:*`).trim()).toBe(`dispatch:${tag}:ended`);
    expect(Number(redis.cli('pttl', `dispatch:${tag}:ended`))).toBeGreaterThan(0);
  });

  test('idempotency records per session are capped', async () => {
    const scope = fresh();
    for (let i = 0; i < 5; i++) {
      await store.beginAttempt({ scope, op: 'o', claim: { key: `k${i}`, leaseMs: 5000 } });
      await store.finishAttempt({ scope, op: 'o', idempotency: { key: `k${i}`, action: 'complete', result, ttlSeconds: 60 + i } });
    }
    const states = [];
    for (let i = 0; i < 5; i++) states.push((await store.beginAttempt({ scope, op: 'o', claim: { key: `k${i}`, leaseMs: 5000 } })).claim?.state);
    expect(states).toEqual(['claimed', 'claimed', 'completed', 'completed', 'completed']);
  });

  test('a frozen Redis fails each step within the timeout; it recovers when it wakes', async () => {
    const scope = fresh();
    redis.signal('SIGSTOP');
    try {
      await expectUnavailableWithin(store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 5000 } }), 1000);
      await expectUnavailableWithin(store.memory(scope), 1000);
      await expectUnavailableWithin(store.readResult(scope.tenant, newResultHandle(scope.sessionId)), 1000);
    } finally {
      redis.signal('SIGCONT');
    }
    await expect(store.endSession(scope)).resolves.toBeUndefined();
  });

  test('a stopped Redis fails steps at once; a completion written meanwhile lands when it returns', async () => {
    const scope = fresh();
    expect((await store.beginAttempt({ scope, op: 'o', claim: { key: 'in-flight', leaseMs: 30_000 } })).claim).toEqual({ state: 'claimed' });
    await redis.stop('SIGKILL');
    try {
      await sleep(100);
      await expectUnavailableWithin(store.beginAttempt({ scope, op: 'o', claim: { key: 'new', leaseMs: 5000 } }), 200);
      await expectUnavailableWithin(store.finishAttempt({ scope, op: 'o', idempotency: { key: 'in-flight', action: 'complete', result, ttlSeconds: 60 } }), 500);
    } finally {
      await redis.start();
    }
    const deadline = Date.now() + 5000;
    let claim;
    while (Date.now() < deadline) {
      claim = await store.beginAttempt({ scope, op: 'o', claim: { key: 'in-flight', leaseMs: 5000 } }).then((r) => r.claim, () => undefined);
      if (claim?.state === 'completed') break;
      await sleep(100);
    }
    expect(claim).toEqual({ state: 'completed', result });
    expect((await store.beginAttempt({ scope, op: 'o', claim: { key: 'new', leaseMs: 5000 } })).claim).toEqual({ state: 'claimed' });
  });

  test('a bounded result whose completion is written late replays without a handle: its whole text was not kept', async () => {
    const scope = fresh();
    const handle = newResultHandle(scope.sessionId);
    const cut = { ...result, output: 'head [cut] tail', truncated: true, resultHandle: handle };
    expect((await store.beginAttempt({ scope, op: 'o', claim: { key: 'spilled', leaseMs: 30_000 } })).claim).toEqual({ state: 'claimed' });
    await redis.stop('SIGKILL');
    try {
      await sleep(100);
      await expectUnavailableWithin(store.finishAttempt({ scope, op: 'o', idempotency: { key: 'spilled', action: 'complete', result: cut, ttlSeconds: 60 }, spill: { handle, text: 'the whole long text', ttlSeconds: 60 } }), 500);
    } finally {
      await redis.start();
    }
    let claim;
    for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(100)) {
      claim = await store.beginAttempt({ scope, op: 'o', claim: { key: 'spilled', leaseMs: 5000 } }).then((r) => r.claim, () => undefined);
      if (claim?.state === 'completed') break;
    }
    // Still cut (the model learns so), but with no handle that ReadResult would not find, and the
    // warning that says why.
    expect(claim).toEqual({ state: 'completed', result: { ...cut, resultHandle: '', warnings: [fullTextNotKeptWarning(19)] } });
    expect(await store.readResult(scope.tenant, handle)).toBeUndefined();
  });
});

test('a Redis that is not there fails every step fast with StoreUnavailableError', async () => {
  const store = createRedisStore(connectRedis(`redis://127.0.0.1:${await freeRedisPort()}`, { commandTimeoutMs: 300 }), { timeoutMs: 300 });
  try {
    const scope = fresh();
    await expectUnavailableWithin(store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 1000 } }), 500);
    await expectUnavailableWithin(store.finishAttempt({ scope, op: 'o', record: { result: 'h', failed: false, window: 10 } }), 500);
    await expectUnavailableWithin(store.endSession(scope), 500);
  } finally {
    await store.close();
  }
});
