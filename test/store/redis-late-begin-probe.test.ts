import { randomUUID } from 'node:crypto';
import { StoreUnavailableError, type BeginAttempt, type SessionScope } from '../../src/store';
import { connectRedis, createRedisStore, sessionKeys, whenReady, type RedisClient, type RedisConnectOptions, type RedisStore, type RedisStoreOptions } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

// A begin step that carries a loop-block (its probe's holder and lease) and gets no answer within
// the store timeout (Redis frozen) may still land, and take the probe late. Its attempt failed
// STORE_UNAVAILABLE before running anything, so nothing would ever give that probe back: the
// begin's failure queued only the claim's release (without the probe), and for a read-only call
// nothing at all. The probe stayed held for its whole lease (the tool's timeout + 5 s), and every
// identical call was refused LOOP_BLOCKED meanwhile, Redis back and answering. The give-back is
// queued now; it lands after the late begin: on the same connection in order, and on a new one
// (the frozen one dropped, src/store/redis/dead-sockets.ts) only once that one is ready, which
// Redis answers after it has run what the old one had sent.

jest.setTimeout(30_000);

const fresh = (): SessionScope => ({ tenant: 't', sessionId: `late-probe-${randomUUID()}` });
const OP = 'search\u0000{"q":"x"}';
const LEASE = 35_000;
const block = (holder: string): BeginAttempt['block'] => ({ threshold: 2, cooldownMs: 0, leaseMs: LEASE, holder });

let redis: TestRedis;
let store: RedisStore;
const stores: RedisStore[] = [];
async function open(options: RedisStoreOptions = {}, connectOptions: RedisConnectOptions = {}): Promise<{ client: RedisClient; store: RedisStore }> {
  const client = connectRedis(redis.url, connectOptions);
  await whenReady(client, 5000);
  // The production defaults: a step may take 1 s, waiting writes are retried every second.
  const opened = createRedisStore(client, { timeoutMs: 1000, ...options });
  stores.push(opened);
  return { client, store: opened };
}
beforeAll(async () => {
  redis = await startRedis({ own: true });
  store = (await open()).store;
});
afterAll(async () => {
  redis?.signal('SIGCONT');
  for (const opened of stores) await opened.close();
  await redis?.close();
});

/** A session whose op failed twice (block threshold 2, no cool-down): its next call takes the probe. */
async function blocked(on = store): Promise<SessionScope> {
  const scope = fresh();
  for (let i = 0; i < 2; i++) await on.finishAttempt({ scope, op: OP, record: { result: 'boom', failed: true, window: 100 } });
  return scope;
}

/** Runs `begin` with Redis frozen until it has failed (no answer in time), then lets Redis run it late. */
async function lateBegin(begin: () => Promise<unknown>, frozenMs = 0): Promise<void> {
  redis.signal('SIGSTOP');
  try {
    await expect(begin()).rejects.toBeInstanceOf(StoreUnavailableError);
    await new Promise((r) => setTimeout(r, frozenMs));
  } finally {
    redis.signal('SIGCONT');
  }
}

/** Whether the session holds no loop-block probe (its only probe key is gone). */
const probeFree = (scope: SessionScope) => redis.cli('--scan', '--pattern', `${sessionKeys(scope).probe('')}*`).trim() === '';

test('a read-only begin that timed out but took the probe late gives it back: the next identical call runs, not LOOP_BLOCKED', async () => {
  const scope = await blocked();
  await lateBegin(() => store.beginAttempt({ scope, op: OP, block: block(`h1-${randomUUID()}`) }));
  // Given back within a second or so (before, never: held for its 35 s lease).
  await until(() => (probeFree(scope) ? true : undefined), 'the probe given back', 5000).catch(() => undefined);
  const next = await store.beginAttempt({ scope, op: OP, block: block(`h2-${randomUUID()}`) });
  expect(next.probeHeldMs).toBeUndefined();
  expect(next.probeClaimed).toBe(true);
});

test('a claiming begin that timed out but landed gives back its probe with its claim: the next identical call claims and runs', async () => {
  const scope = await blocked();
  const claim = (owner: string) => ({ key: 'K', leaseMs: LEASE, owner });
  await lateBegin(() => store.beginAttempt({ scope, op: OP, claim: claim('attempt1'), block: block('attempt1') }));
  const record = sessionKeys(scope).record('K');
  // The orphan claim's release and the probe's give-back, one write (before, the release alone).
  await until(() => (redis.cli('EXISTS', record).trim() === '0' && probeFree(scope) ? true : undefined), 'the claim and the probe given back', 5000).catch(() => undefined);
  const next = await store.beginAttempt({ scope, op: OP, claim: claim('attempt2'), block: block('attempt2') });
  expect(next.probeHeldMs).toBeUndefined();
  expect(next.probeClaimed).toBe(true);
  expect(next.claim?.state).toBe('claimed');
});

test('a give-back of a probe the late begin did not take frees nothing: the probe another call holds stays held', async () => {
  const scope = await blocked();
  const held = await store.beginAttempt({ scope, op: OP, block: block('holder') });
  expect(held.probeClaimed).toBe(true);
  // Refused for the probe 'holder' holds, late: its give-back must not free that probe.
  await lateBegin(() => store.beginAttempt({ scope, op: OP, block: block(`late-${randomUUID()}`) }));
  await new Promise((r) => setTimeout(r, 2500));
  expect(probeFree(scope)).toBe(false);
  expect((await store.beginAttempt({ scope, op: OP, block: block(`h3-${randomUUID()}`) })).probeHeldMs).toBeGreaterThan(0);
});

test('frozen past the dead-socket drop, the give-back written on the new connection lands after the late begin on the old one', async () => {
  // Retried only when a connection becomes ready (not every second): the give-back goes out on the new one.
  // A connection is dropped after 1.5 s without a byte, commands waiting (3 s by default, the
  // larger of 3 s and 3 store timeouts): the same drop, sooner.
  const { client, store: own } = await open({ pendingRetryMs: 60_000 }, { deadSocketMs: 1_500 });
  let reconnects = 0;
  client.on('reconnecting', () => reconnects++);
  const scope = await blocked(own);
  // 1 s to fail, 1.7 s more frozen: the connection (1.5 s without a byte, commands waiting, seen
  // within a quarter of that) is dropped.
  await lateBegin(() => own.beginAttempt({ scope, op: OP, block: block(`h1-${randomUUID()}`) }), 1700);
  expect(reconnects).toBeGreaterThan(0);
  await until(() => (client.status === 'ready' ? true : undefined), 'the new connection', 10_000);
  await until(() => (probeFree(scope) ? true : undefined), 'the probe given back', 5000).catch(() => undefined);
  const next = await own.beginAttempt({ scope, op: OP, block: block(`h2-${randomUUID()}`) });
  expect(next.probeHeldMs).toBeUndefined();
  expect(next.probeClaimed).toBe(true);
});
