import { randomUUID } from 'node:crypto';
import type { Logger } from '../../src/log';
import { StoreUnavailableError, type SessionScope } from '../../src/store';
import { connectRedis, createRedisStore, sessionKeys, whenReady, type RedisStore } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A claim Redis refused with an error reply (out of memory, NOPERM) was queued as a pending
// release all the same, as if it might have landed: it took room in the pending queue, and
// shutdown logged "redis store closed with idempotency records unwritten" though nothing was. A
// release is now queued only for a claim that got no answer; a script that fails after its claim
// deletes it again, so an error reply means no claim.

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fresh = (): SessionScope => ({ tenant: 't', sessionId: `refused-${randomUUID()}` });

interface Logged {
  readonly level: string;
  readonly message: string;
  readonly fields?: Record<string, unknown>;
}
function recorder(): Logger & { lines: Logged[] } {
  const lines: Logged[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, message, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  await redis?.close();
});

/** A store as ACL user `user` (all permissions until the test takes some away), logging to `logger`. */
async function storeAs(user: string, logger: Logger): Promise<RedisStore> {
  redis.cli('ACL', 'SETUSER', user, 'reset', 'on', '>pw', '~*', '&*', '+@all');
  const client = connectRedis(`redis://${user}:pw@127.0.0.1:${redis.port}/0`, {});
  await whenReady(client, 5000);
  return createRedisStore(client, { timeoutMs: 1000, pendingRetryMs: 100, logger });
}

const claim = (store: RedisStore, scope: SessionScope, owner: string) => store.beginAttempt({ scope, op: 'pay', claim: { key: 'K', leaseMs: 30_000, owner } });

test('a claim refused for want of memory queues no release: nothing is written later, and its key is free', async () => {
  const logger = recorder();
  const store = await storeAs('oom', logger);
  const scope = fresh();
  try {
    await store.beginAttempt({ scope, op: 'warm' });
    redis.cli('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    redis.cli('CONFIG', 'SET', 'maxmemory', '1');
    const refused = await claim(store, scope, 'a1').catch((e: unknown) => e);
    redis.cli('CONFIG', 'SET', 'maxmemory', '0');
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toMatch(/OOM/);
    await sleep(500);
    expect(logger.lines.filter((l) => l.message === 'pending idempotency records written to redis')).toEqual([]);
    expect((await claim(store, scope, 'a2')).claim).toEqual({ state: 'claimed' });
  } finally {
    redis.cli('CONFIG', 'SET', 'maxmemory', '0');
    await store.close();
  }
  expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
});

test('a claim whose script failed midway (a command the ACL denies) took no claim, and queues no release', async () => {
  const logger = recorder();
  const store = await storeAs('nozadd', logger);
  const scope = fresh();
  try {
    redis.cli('ACL', 'SETUSER', 'nozadd', '-zadd');
    const refused = await claim(store, scope, 'a1').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toMatch(/can't run this command/);
    expect(redis.cli('GET', sessionKeys(scope).record('K')).trim()).toBe('');
    await sleep(500);
    expect(logger.lines.filter((l) => l.message === 'pending idempotency records written to redis')).toEqual([]);
  } finally {
    await store.close();
  }
  expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
});

test('claims refused NOPERM leave nothing unwritten at shutdown', async () => {
  const logger = recorder();
  const store = await storeAs('noscript', logger);
  try {
    redis.cli('ACL', 'SETUSER', 'noscript', '-eval', '-evalsha');
    for (let i = 0; i < 8; i++) {
      const refused = await claim(store, fresh(), `o${i}`).catch((e: unknown) => e);
      expect((refused as Error).message).toMatch(/NOPERM/);
    }
  } finally {
    await store.close();
  }
  expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
});

test("a script that failed after counting the call (a command the ACL denies) gives the count back: refused calls never spend the session's budget", async () => {
  const logger = recorder();
  const store = await storeAs('nocount', logger);
  const scope = fresh();
  const keys = sessionKeys(scope);
  const budget = (token: string) => ({ id: 'charge', max: 3, token, tokenLeaseMs: 30_000 });
  try {
    // With a claim: the record index's ZADD is refused after the count.
    redis.cli('ACL', 'SETUSER', 'nocount', '-zadd');
    for (let k = 1; k <= 3; k++) {
      const refused = await store.beginAttempt({ scope, op: 'pay', budget: budget(`c${k}`), claim: { key: `K${k}`, leaseMs: 30_000, owner: `a${k}` } }).catch((e: unknown) => e);
      expect((refused as Error).message).toMatch(/can't run this command/);
    }
    expect(redis.cli('HGET', keys.budgets, 'charge').trim()).toBe('0');
    expect(redis.cli('EXISTS', keys.budgetMark('charge', 'c1')).trim()).toBe('0');
    redis.cli('ACL', 'SETUSER', 'nocount', '+zadd');
    // Without a claim: the token's mark is refused after the count.
    redis.cli('ACL', 'SETUSER', 'nocount', '-set');
    const refused = await store.beginAttempt({ scope, op: 'read', budget: budget('c4') }).catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(/can't run this command/);
    expect(redis.cli('HGET', keys.budgets, 'charge').trim()).toBe('0');
    redis.cli('ACL', 'SETUSER', 'nocount', '+set');
    // The budget is whole: its 3 calls run, the 4th is refused.
    for (let k = 1; k <= 3; k++) {
      expect(await store.beginAttempt({ scope, op: 'pay', budget: budget(`d${k}`), claim: { key: `L${k}`, leaseMs: 30_000, owner: `b${k}` } })).toMatchObject({ budgetLeft: 3 - k, claim: { state: 'claimed' } });
    }
    expect(await store.beginAttempt({ scope, op: 'pay', budget: budget('d4'), claim: { key: 'L4', leaseMs: 30_000, owner: 'b4' } })).toMatchObject({ overBudget: true });
  } finally {
    await store.close();
  }
  expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
});

test('a counted claim refused for want of memory counts nothing: the claim is still the first write', async () => {
  const logger = recorder();
  const store = await storeAs('oomcount', logger);
  const scope = fresh();
  try {
    await store.beginAttempt({ scope, op: 'warm' });
    redis.cli('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    redis.cli('CONFIG', 'SET', 'maxmemory', '1');
    const refused = await store.beginAttempt({ scope, op: 'pay', budget: { id: 'charge', max: 3, token: 'c1', tokenLeaseMs: 30_000 }, claim: { key: 'K', leaseMs: 30_000, owner: 'a1' } }).catch((e: unknown) => e);
    redis.cli('CONFIG', 'SET', 'maxmemory', '0');
    expect((refused as Error).message).toMatch(/OOM/);
    expect(redis.cli('HGET', sessionKeys(scope).budgets, 'charge').trim()).toBe('');
    expect(redis.cli('GET', sessionKeys(scope).record('K')).trim()).toBe('');
  } finally {
    redis.cli('CONFIG', 'SET', 'maxmemory', '0');
    await store.close();
  }
});

test("the retry of a counted call is refused its claim for want of memory too: refreshing the token's mark comes after the claim", async () => {
  const store = await storeAs('oomretry', recorder());
  const scope = fresh();
  const budget = { id: 'charge', max: 3, token: 'c1', tokenLeaseMs: 30_000 };
  try {
    // Attempt 1 is counted and claims; its claim is released (it failed before running).
    expect((await store.beginAttempt({ scope, op: 'pay', budget, claim: { key: 'K', leaseMs: 30_000, owner: 'a1' } })).claim?.state).toBe('claimed');
    await store.finishAttempt({ scope, op: 'pay', idempotency: { key: 'K', action: 'release', owner: 'a1' } } as Parameters<RedisStore['finishAttempt']>[0]);
    redis.cli('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    redis.cli('CONFIG', 'SET', 'maxmemory', '1');
    // Attempt 2 of the same call (same token): the mark's PEXPIRE ran first and let the claim pass OOM.
    const retry = await store.beginAttempt({ scope, op: 'pay', budget, claim: { key: 'K', leaseMs: 30_000, owner: 'a2' } }).catch((e: unknown) => e);
    redis.cli('CONFIG', 'SET', 'maxmemory', '0');
    expect((retry as Error).message).toMatch(/OOM/);
    expect(redis.cli('GET', sessionKeys(scope).record('K')).trim()).toBe('');
    expect(redis.cli('HGET', sessionKeys(scope).budgets, 'charge').trim()).toBe('1');
  } finally {
    redis.cli('CONFIG', 'SET', 'maxmemory', '0');
    await store.close();
  }
});
