import { randomUUID } from 'node:crypto';
import { StoreUnavailableError, type BeginAttempt, type SessionScope } from '../../src/store';
import { connectRedis, createRedisStore, sessionKeys, whenReady, type RedisStore, type RedisStoreOptions } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { until } from '../helpers/until';

// Orphan claims and give-backs whose store step failed (src/store/redis/redis-store.ts):
// - a give-back (the release of a claim, and of the loop-block probe it took, when the tool did
//   not run) that failed was queued without its probe: once Redis was back the probe stayed held
//   for its whole lease (the tool's timeout + 5 s), every identical call refused LOOP_BLOCKED;
// - that failed release was no orphan: until the queued release was written (every second), this
//   replica's next identical claim found it and answered IN_PROGRESS;
// - an orphan claim (its claim step got no answer) was forgotten when a claim of its key was
//   refused over budget, though still in Redis: the call's own retry then found it IN_PROGRESS.

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fresh = (): SessionScope => ({ tenant: 't', sessionId: `release-${randomUUID()}` });
const OP = 'pay\u0000{"to":"x"}';
const LEASE = 35_000;
const block = (holder: string): BeginAttempt['block'] => ({ threshold: 2, cooldownMs: 0, leaseMs: LEASE, holder });

let redis: TestRedis;
let proxy: TcpProxy;
const stores: RedisStore[] = [];
async function open(port: number, options: RedisStoreOptions = {}): Promise<RedisStore> {
  const client = connectRedis(`redis://127.0.0.1:${port}`);
  await whenReady(client, 5000);
  const store = createRedisStore(client, { timeoutMs: 1000, ...options });
  stores.push(store);
  return store;
}
beforeAll(async () => {
  redis = await startRedis({ own: true });
  proxy = await startTcpProxy(redis.port);
});
afterAll(async () => {
  for (const store of stores) await store.close();
  await proxy?.close();
  await redis?.close();
});

/** A session whose op failed twice (block threshold 2, no cool-down): its next call takes the probe. */
async function blocked(store: RedisStore): Promise<SessionScope> {
  const scope = fresh();
  for (let i = 0; i < 2; i++) await store.finishAttempt({ scope, op: OP, record: { result: 'boom', failed: true, window: 100 } });
  return scope;
}

test('a give-back lost with its connection frees the probe too once Redis is back: the next identical call runs, not LOOP_BLOCKED', async () => {
  const store = await open(proxy.port);
  const scope = await blocked(store);
  const first = await store.beginAttempt({ scope, op: OP, claim: { key: 'K', leaseMs: LEASE, owner: 'a1' }, block: block('a1') });
  expect(first).toMatchObject({ probeClaimed: true, claim: { state: 'claimed' } });
  // The give-back (its tool was refused after the first step) never reaches Redis.
  proxy.cutWhenClientSends((chunk) => chunk.includes('release'));
  await expect(store.finishAttempt({ scope, op: OP, idempotency: { key: 'K', action: 'release', owner: 'a1' }, unusedProbe: 'a1' })).rejects.toBeInstanceOf(StoreUnavailableError);
  proxy.cutWhenClientSends(undefined);
  // Reconnected, the queued release is written.
  const record = sessionKeys(scope).record('K');
  await until(() => (redis.cli('EXISTS', record).trim() === '0' ? true : undefined), 'the queued release');
  const next = await store.beginAttempt({ scope, op: OP, claim: { key: 'K', leaseMs: LEASE, owner: 'a2' }, block: block('a2') });
  expect(next.probeHeldMs).toBeUndefined();
  expect(next).toMatchObject({ probeClaimed: true, claim: { state: 'claimed' } });
});

test("a release Redis refused (a replica for a moment) is this replica's orphan: its next identical claim, before the queued release is written, claims the key", async () => {
  // Waiting records written every 1.5 s (1 s by default): the claim below comes well before.
  const store = await open(redis.port, { pendingRetryMs: 1500 });
  const other = await open(redis.port, { pendingRetryMs: 1500 });
  const scope = fresh();
  const claim = (on: RedisStore, owner: string) => on.beginAttempt({ scope, op: OP, claim: { key: 'K', leaseMs: LEASE, owner } }).then((r) => r.claim?.state);
  expect(await claim(store, 'a1')).toBe('claimed');
  redis.cli('REPLICAOF', '127.0.0.1', '1');
  try {
    await expect(store.finishAttempt({ scope, op: OP, idempotency: { key: 'K', action: 'release', owner: 'a1' } })).rejects.toBeInstanceOf(StoreUnavailableError);
  } finally {
    redis.cli('REPLICAOF', 'NO', 'ONE');
  }
  // Only this replica knows the claim ran nothing: another one finds it held.
  expect(await claim(other, 'b1')).toBe('in_progress');
  expect(await claim(store, 'a2')).toBe('claimed');
  // The late release (written 1.5 s on) deletes nothing of the new claim.
  await sleep(2000);
  expect(await claim(other, 'b2')).toBe('in_progress');
});

test("an orphan claim survives a claim of its key refused over budget: the call's retry (its budget token counted) claims the key", async () => {
  const store = await open(redis.port, { pendingRetryMs: 3000 });
  const scope = fresh();
  const attempt = (owner: string, token: string) => store.beginAttempt({ scope, op: OP, claim: { key: 'K', leaseMs: LEASE, owner }, budget: { id: 'b', max: 1, token } });
  await store.beginAttempt({ scope, op: 'warm' });
  // The call's first claim (its count the budget's last) gets no answer in time, but lands.
  redis.cli('CLIENT', 'PAUSE', '1200', 'WRITE');
  await expect(attempt('x1', 'X')).rejects.toBeInstanceOf(StoreUnavailableError);
  await sleep(300);
  // An identical call meanwhile: over budget, nothing claimed.
  expect(await attempt('y1', 'Y')).toMatchObject({ overBudget: true });
  // The call's retry (~250 ms after its first attempt): counted already, it replaces its orphan.
  expect((await attempt('x2', 'X')).claim?.state).toBe('claimed');
});
