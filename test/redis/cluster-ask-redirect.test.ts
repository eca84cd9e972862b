import { connectRedis, whenReady, type RedisClient } from '../../src/store/redis/connect';
import { createRedisStore, type RedisStore } from '../../src/store/redis/redis-store';
import { sessionKeys } from '../../src/store/redis/session-keys';
import { StoreUnavailableError, type SessionScope } from '../../src/store/store';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';

jest.setTimeout(60_000);

// On an -ASK redirect (a slot being moved between nodes) ioredis sends ASKING to the importing node
// and drops its promise: when that node stalls past the command timeout, or its connection drops,
// ASKING rejected unhandled, which ends a Node process. The store step itself must still fail.

const scope: SessionScope = { tenant: 'acme', sessionId: 'resharded' };

let cluster: TestRedisCluster | undefined;
let store: RedisStore | undefined;

// Each test has a cluster of its own, never used before it (its nodes are stalled, killed, its slots
// moved): the three are started side by side before the tests, not one at the start of each.
const TESTS = 3;
let unused: TestRedisCluster[] = [];
beforeAll(async () => {
  const started = await Promise.allSettled(Array.from({ length: TESTS }, () => startRedisCluster(3)));
  unused = started.flatMap((c) => (c.status === 'fulfilled' ? [c.value] : []));
  const failed = started.find((c) => c.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
});
afterAll(async () => {
  for (const c of unused.splice(0)) await c.close();
});
/** A cluster no other test has used. */
function freshCluster(): TestRedisCluster {
  const c = unused.shift();
  if (!c) throw new Error(`more tests than the ${TESTS} clusters started`);
  return c;
}
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});

afterEach(async () => {
  await store?.close().catch(() => undefined);
  store = undefined;
  await cluster?.close();
  cluster = undefined;
  process.off('unhandledRejection', onUnhandled);
});

/** The port of the master that serves `slot`, read from `CLUSTER NODES`. */
function ownerOf(c: TestRedisCluster, slot: number): number {
  for (const line of c.cli(c.ports[0]!, 'cluster', 'nodes').trim().split('\n')) {
    const fields = line.split(' ');
    const serves = fields.slice(8).some((range) => {
      const [from, to] = range.split('-').map(Number);
      return slot >= from! && slot <= (to ?? from!);
    });
    if (serves) return Number(/:(\d+)@/.exec(fields[1]!)![1]);
  }
  throw new Error(`no node serves slot ${slot}`);
}

const id = (c: TestRedisCluster, port: number) => c.cli(port, 'cluster', 'myid').trim();

/**
 * CLUSTER SETSLOT on `port`, until it answers OK (redis-cli exits 0 on an error reply): a node
 * that has not yet heard of the other through the cluster bus refuses it ("I don't know about
 * node"), and the slot would then never move. At most 2 s.
 */
function setslot(c: TestRedisCluster, port: number, ...args: string[]): void {
  let reply = '';
  for (let tries = 0; tries < 40; tries++) {
    reply = c.cli(port, 'cluster', 'setslot', ...args).trim();
    if (reply === 'OK') return;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
  throw new Error(`CLUSTER SETSLOT ${args.join(' ')} on ${port}: ${reply}`);
}

/** Starts moving the session's slot to another master (no key moved yet). */
function startMigration(c: TestRedisCluster): { slot: number; owner: number; importing: number } {
  const slot = Number(c.cli(c.ports[0]!, 'cluster', 'keyslot', sessionKeys(scope).window).trim());
  const owner = ownerOf(c, slot);
  const importing = c.ports.find((p) => p !== owner)!;
  setslot(c, importing, String(slot), 'importing', id(c, owner));
  setslot(c, owner, String(slot), 'migrating', id(c, importing));
  return { slot, owner, importing };
}

/** Ends the move (as redis-cli does once every key moved): the slot is the importing node's. */
function endMigration(c: TestRedisCluster, move: { slot: number; owner: number; importing: number }): void {
  for (const port of [move.importing, move.owner, ...c.ports.filter((p) => p !== move.owner && p !== move.importing)]) {
    setslot(c, port, String(move.slot), 'node', id(c, move.importing));
  }
}

async function storeOn(c: RedisClient, timeoutMs: number): Promise<RedisStore> {
  const s = createRedisStore(c, { timeoutMs });
  expect(await whenReady(c, 10_000)).toBe(true);
  return s;
}

const step = (s: RedisStore) => s.beginAttempt({ scope, op: 'send\u0000"x"', claim: { key: 'k1', leaseMs: 5_000, owner: 'a1' } });

test('a store step redirected with -ASK to an importing node that stalls fails for its caller, with no unhandled rejection', async () => {
  const c = (cluster = freshCluster());
  const { importing } = startMigration(c);
  store = await storeOn(connectRedis(c.url, { commandTimeoutMs: 300 }), 1_000);
  // The importing node healthy: a one-key step follows the redirect and succeeds (the session has
  // no key yet; a step of several keys would be answered TRYAGAIN until the slot has moved).
  await expect(store.memory(scope)).resolves.toEqual([]);

  c.signal(importing, 'SIGSTOP');
  try {
    await expect(store.memory(scope)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(step(store)).rejects.toBeInstanceOf(StoreUnavailableError);
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    c.signal(importing, 'SIGCONT');
  }
  expect(unhandled).toEqual([]);
});

test('a store step redirected with -ASK to an importing node whose connection drops fails for its caller, with no unhandled rejection', async () => {
  const c = (cluster = freshCluster());
  const { importing } = startMigration(c);
  store = await storeOn(connectRedis(c.url, { commandTimeoutMs: 2_000 }), 2_000);
  await expect(store.memory(scope)).resolves.toEqual([]);

  // Stalled, so that ASKING and the step wait unanswered, then killed: the connection closes.
  c.signal(importing, 'SIGSTOP');
  const failed = expect(store.memory(scope)).rejects.toBeInstanceOf(StoreUnavailableError);
  setTimeout(() => c.signal(importing, 'SIGKILL'), 200);
  await failed;
  await new Promise((r) => setTimeout(r, 500));
  expect(unhandled).toEqual([]);
  // The slot refresh the dropped connection started leaves a socket ioredis destroys only after
  // its disconnectTimeout (2 s): waited for, so that the test leaves nothing running.
  await store.close();
  store = undefined;
  await new Promise((r) => setTimeout(r, 2_000));
});

test('a step answered TRYAGAIN while its slot moves succeeds once the move ends within the store timeout, and runs once', async () => {
  // A new claim is a key that exists on neither node: both refuse the script (TRYAGAIN) until the
  // slot has moved. ioredis gave up after 16 redirections (~0.6 s), well within the store timeout.
  // The move ends 1 s in, by redis-cli runs that hold the event loop (six; ~1 s on a loaded CI
  // machine, where a 1.5 s timeout then ran out before the step was sent again): 3 s.
  const c = (cluster = freshCluster());
  store = await storeOn(connectRedis(c.url, { commandTimeoutMs: 3_000 }), 3_000);
  const move = startMigration(c);
  const started = Date.now();
  const claimed = step(store);
  await new Promise((r) => setTimeout(r, 1_000));
  endMigration(c, move);
  await expect(claimed).resolves.toMatchObject({ claim: { state: 'claimed' } });
  expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  // Taken once: another attempt at the same key finds it held.
  await expect(store.beginAttempt({ scope, op: 'send\u0000"x"', claim: { key: 'k1', leaseMs: 5_000, owner: 'a2' } })).resolves.toMatchObject({ claim: { state: 'in_progress' } });
  expect(Number(c.cli(move.importing, 'cluster', 'countkeysinslot', String(move.slot)))).toBeGreaterThan(0);
});
