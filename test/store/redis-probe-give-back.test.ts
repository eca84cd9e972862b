import { randomUUID } from 'node:crypto';
import { StoreUnavailableError, type BeginAttempt, type SessionScope } from '../../src/store';
import { connectRedis, createRedisStore, sessionKeys, whenReady, type RedisStore, type RedisStoreOptions } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { until } from '../helpers/until';

// The give-back of a loop-block probe alone (src/store/redis/pending-writes.ts): a read-only
// tool's attempt takes no claim, but may take the probe. When the finish step that gives the
// unused probe back failed (Redis cut off, or refusing writes for a moment), nothing was queued
// (a record without an idempotency part was skipped): the probe stayed held for its whole lease
// (the tool's timeout + 5 s), every identical call refused LOOP_BLOCKED meanwhile. Queued now,
// until the probe's lease would have ended anyway.

jest.setTimeout(30_000);

const fresh = (): SessionScope => ({ tenant: 't', sessionId: `probe-${randomUUID()}` });
const OP = 'search\u0000{"q":"x"}';
const LEASE = 35_000;
const block = (holder: string, leaseMs = LEASE): BeginAttempt['block'] => ({ threshold: 2, cooldownMs: 0, leaseMs, holder });

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
const probeKey = (scope: SessionScope) => sessionKeys(scope).probe(probeIdOf(scope));
// The probe's key, found as the only probe key of the session (its op's id is the store's own hash).
const probeIdOf = (scope: SessionScope) => {
  const prefix = sessionKeys(scope).probe('');
  const found = redis.cli('--scan', '--pattern', `${prefix}*`).trim();
  return found.slice(prefix.length);
};

test('a probe-only give-back lost with its connection is written once Redis is back: the next identical call runs, not LOOP_BLOCKED', async () => {
  const store = await open(proxy.port);
  const scope = await blocked(store);
  const holder = `h1-${randomUUID()}`;
  const first = await store.beginAttempt({ scope, op: OP, block: block(holder) });
  expect(first.probeClaimed).toBe(true);
  const key = probeKey(scope);
  expect(redis.cli('EXISTS', key).trim()).toBe('1');
  // The give-back (the read-only tool did not run) never reaches Redis.
  proxy.cutWhenClientSends((chunk) => chunk.includes(holder));
  await expect(store.finishAttempt({ scope, op: OP, unusedProbe: holder })).rejects.toBeInstanceOf(StoreUnavailableError);
  proxy.cutWhenClientSends(undefined);
  // Written within a second or so (before, never: the probe stayed held for its 35 s lease).
  await until(() => (redis.cli('EXISTS', key).trim() === '0' ? true : undefined), 'the queued give-back', 5000).catch(() => undefined);
  const next = await store.beginAttempt({ scope, op: OP, block: block(`h2-${randomUUID()}`) });
  expect(next.probeHeldMs).toBeUndefined();
  expect(next.probeClaimed).toBe(true);
});

test('a probe-only give-back Redis refused (a replica for a moment) is retried: the next identical call runs', async () => {
  const store = await open(redis.port);
  const scope = await blocked(store);
  const holder = `h1-${randomUUID()}`;
  expect((await store.beginAttempt({ scope, op: OP, block: block(holder) })).probeClaimed).toBe(true);
  const key = probeKey(scope);
  redis.cli('REPLICAOF', '127.0.0.1', '1');
  try {
    await expect(store.finishAttempt({ scope, op: OP, unusedProbe: holder })).rejects.toBeInstanceOf(StoreUnavailableError);
  } finally {
    redis.cli('REPLICAOF', 'NO', 'ONE');
  }
  // Written within a second or so (before, never: the probe stayed held for its 35 s lease).
  await until(() => (redis.cli('EXISTS', key).trim() === '0' ? true : undefined), 'the queued give-back', 5000).catch(() => undefined);
  const next = await store.beginAttempt({ scope, op: OP, block: block(`h2-${randomUUID()}`) });
  expect(next.probeHeldMs).toBeUndefined();
  expect(next.probeClaimed).toBe(true);
});
