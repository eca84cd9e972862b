import { randomUUID } from 'node:crypto';
import type { SessionScope } from '../../src/store';
import { connectRedis, createRedisStore, sessionKeys, whenReady, type RedisStore } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { stored } from './contract-fixtures';

// Found in review: a completion Redis refused (out of memory) waits on its replica and is written
// once Redis takes writes again, but it was written with its whole TTL from then: a record of
// ttl_seconds 4 written 2 s late was replayed 6 s after its call. It lives its TTL from its
// call, as the memory store and the replica's own waiting copy (PendingWrites.waiting) keep it.

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fresh = (): SessionScope => ({ tenant: 't', sessionId: `late-${randomUUID()}` });

let redis: TestRedis;
let store: RedisStore;
let other: RedisStore;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  const open = async () => {
    const client = connectRedis(redis.url, {});
    await whenReady(client, 5000);
    return createRedisStore(client, { timeoutMs: 1000, pendingRetryMs: 100 });
  };
  store = await open();
  other = await open();
});
afterAll(async () => {
  redis?.cli('CONFIG', 'SET', 'maxmemory', '0');
  await store?.close();
  await other?.close();
  await redis?.close();
});

test('a completion written late lives its TTL from its call, not from its write', async () => {
  const scope = fresh();
  const claim = (on: RedisStore, owner: string) => on.beginAttempt({ scope, op: 'pay', claim: { key: 'K', leaseMs: 30_000, owner } }).then((r) => r.claim);
  expect(await claim(store, 'a1')).toEqual({ state: 'claimed' });
  redis.cli('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
  redis.cli('CONFIG', 'SET', 'maxmemory', '1');
  const completedAt = Date.now();
  await expect(store.finishAttempt({ scope, op: 'pay', idempotency: { key: 'K', action: 'complete', result: stored('paid'), ttlSeconds: 3 } })).rejects.toThrow(/OOM/);
  // Refused for 1.5 s: written with its whole TTL from then, it would live till 4.5 s after its call.
  await sleep(1_500);
  redis.cli('CONFIG', 'SET', 'maxmemory', '0');
  // Written by the retry (every 100 ms): another replica finds it.
  while ((await other.findRecord(scope, 'K')) !== 'completed' && Date.now() < completedAt + 2_600) await sleep(20);
  const pttl = Number(redis.cli('PTTL', sessionKeys(scope).record('K')).trim());
  expect(pttl).toBeLessThanOrEqual(completedAt + 3_000 - Date.now() + 100);
  expect(await claim(other, 'b1')).toEqual({ state: 'completed', result: stored('paid') });
  await sleep(Math.max(0, completedAt + 3_200 - Date.now()));
  expect(await claim(other, 'b2')).toEqual({ state: 'claimed' });
});
