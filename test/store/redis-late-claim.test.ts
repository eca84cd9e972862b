import { randomUUID } from 'node:crypto';
import { StoreUnavailableError, type SessionScope } from '../../src/store';
import { connectRedis, createRedisStore, whenReady, type RedisStore } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A claim whose answer comes too late fails its attempt (STORE_UNAVAILABLE, nothing run) but may
// still land in Redis; its release waits for the next flush of the pending writes (every second).
// The call's retry, ~250 ms later, found that orphan claim and ended IN_PROGRESS. The next claim
// of the key on the same replica now gives the orphan up in its own step.

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fresh = (): SessionScope => ({ tenant: 't', sessionId: `late-${randomUUID()}` });
const claimOf = (store: RedisStore, scope: SessionScope, owner: string) => store.beginAttempt({ scope, op: 'pay', claim: { key: 'K', leaseMs: 35_000, owner } }).then((r) => r.claim?.state);

let redis: TestRedis;
let store: RedisStore;
let other: RedisStore;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  const open = async () => {
    const client = connectRedis(redis.url);
    await whenReady(client, 5000);
    // The production defaults: a step may take 1 s, waiting releases are written every second.
    return createRedisStore(client, { timeoutMs: 1000 });
  };
  store = await open();
  other = await open();
});
afterAll(async () => {
  await store?.close();
  await other?.close();
  await redis?.close();
});

test('the retry after a claim that timed out but landed claims the key (on its replica), and holds it: the late release deletes nothing', async () => {
  const scope = fresh();
  await store.beginAttempt({ scope, op: 'warm' });
  redis.cli('CLIENT', 'PAUSE', '1200', 'WRITE');
  await expect(claimOf(store, scope, 'attempt1')).rejects.toBeInstanceOf(StoreUnavailableError);
  await sleep(300);
  // Only the replica that sent the orphan claim knows it ran nothing: another one finds it held.
  expect(await claimOf(other, scope, 'elsewhere')).toBe('in_progress');
  expect(await claimOf(store, scope, 'attempt2')).toBe('claimed');
  // Another replica's identical call finds the retry's claim, then and after the orphan's release.
  expect(await claimOf(other, scope, 'elsewhere')).toBe('in_progress');
  await sleep(1500);
  expect(await claimOf(other, scope, 'elsewhere')).toBe('in_progress');
  expect(await claimOf(store, scope, 'attempt3')).toBe('in_progress');
});
