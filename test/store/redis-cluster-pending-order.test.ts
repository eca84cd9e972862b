import { randomUUID } from 'node:crypto';
import { StoreUnavailableError, type SessionScope } from '../../src/store';
import { connectRedis, createRedisStore, sessionKeys, whenReady, type RedisStore } from '../../src/store/redis';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { until } from '../helpers/until';
import { keySlot } from '../../src/store/redis/cluster-place';

// The pending writes on a Redis Cluster (src/store/redis/pending-writes.ts): the queue stopped at
// its first failing write, so a release queued for a healthy node waited behind one for a node
// that was down (frozen here), for as long as it stayed down: its key was IN_PROGRESS on every
// other replica meanwhile, up to the claim's lease (the tool's timeout + 5 s).

jest.setTimeout(60_000);

const OP = 'pay\u0000{"to":"x"}';
const LEASE = 35_000;

let cluster: TestRedisCluster;
const stores: RedisStore[] = [];
async function open(): Promise<RedisStore> {
  const client = connectRedis(cluster.url);
  if (!(await whenReady(client, 10_000))) throw new Error('the cluster is not ready');
  const store = createRedisStore(client, { timeoutMs: 1000 });
  stores.push(store);
  return store;
}
beforeAll(async () => {
  // No node is deemed failed while the test runs: the other masters keep serving their slots.
  cluster = await startRedisCluster(3, 0, { nodeTimeoutMs: 60_000 });
});
afterAll(async () => {
  for (const port of cluster?.ports ?? []) cluster.signal(port, 'SIGCONT');
  for (const store of stores) await store.close();
  await cluster?.close();
});

/** A session whose keys are on the master at `port`. */
function sessionOn(port: number): SessionScope {
  for (;;) {
    const scope = { tenant: 't', sessionId: `order-${randomUUID()}` };
    const slot = Number(cluster.cli(port, 'CLUSTER', 'KEYSLOT', sessionKeys(scope).record('K')).trim());
    const owner = cluster.cli(port, 'CLUSTER', 'SLOTS');
    if (ownsSlot(owner, port, slot)) return scope;
  }
}
/** Whether the node at `port` serves `slot`, from redis-cli's CLUSTER SLOTS output (start, end, ip, port, id per range). */
function ownsSlot(slots: string, port: number, slot: number): boolean {
  const lines = slots.split('\n').map((l) => l.trim());
  for (let i = 0; i + 3 < lines.length; i++) {
    if (/^\d+$/.test(lines[i]!) && /^\d+$/.test(lines[i + 1]!) && lines[i + 2] === '127.0.0.1' && Number(lines[i + 3]) === port) {
      if (slot >= Number(lines[i]) && slot <= Number(lines[i + 1])) return true;
    }
  }
  return false;
}

test("a release queued for a healthy node is written while a record queued before it waits for a frozen node", async () => {
  const store = await open();
  const other = await open();
  const [down, up] = [cluster.ports[0]!, cluster.ports[1]!];
  const onDown = sessionOn(down);
  const onUp = sessionOn(up);
  const claim = (on: RedisStore, scope: SessionScope, owner: string) => on.beginAttempt({ scope, op: OP, claim: { key: 'K', leaseMs: LEASE, owner } }).then((r) => r.claim?.state);
  const release = (scope: SessionScope, owner: string) => store.finishAttempt({ scope, op: OP, idempotency: { key: 'K', action: 'release', owner } });
  expect(await claim(store, onDown, 'a1')).toBe('claimed');
  expect(await claim(store, onUp, 'b1')).toBe('claimed');
  cluster.signal(down, 'SIGSTOP');
  try {
    // First queued: the release for the frozen node.
    await expect(release(onDown, 'a1')).rejects.toBeInstanceOf(StoreUnavailableError);
    // Then one for the healthy node, which refuses writes for a moment only (NOREPLICAS).
    cluster.cli(up, 'CONFIG', 'SET', 'min-replicas-to-write', '1');
    try {
      await expect(release(onUp, 'b1')).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      cluster.cli(up, 'CONFIG', 'SET', 'min-replicas-to-write', '0');
    }
    const record = sessionKeys(onUp).record('K');
    // Written within a few retries (every second). Before, not while the other node stayed frozen.
    await until(() => (cluster.cli(up, 'EXISTS', record).trim() === '0' ? true : undefined), 'the release on the healthy node', 6000).catch(() => undefined);
    expect(cluster.cli(up, 'GET', record).trim()).toBe('');
    expect(await claim(other, onUp, 'c1')).toBe('claimed');
  } finally {
    cluster.signal(down, 'SIGCONT');
  }
  // The frozen node back, its own release is written too.
  const held = sessionKeys(onDown).record('K');
  await until(() => (cluster.cli(down, 'EXISTS', held).trim() === '0' ? true : undefined), 'the release on the node back', 10_000);
});

test("the slot a key is placed by is Redis Cluster's own", () => {
  const keys = ['plain', 'dispatch:{dA:c2Vzc2lvbg}:rec:K', '{}empty-tag', 'a{b}c{d}', `dispatch:{${randomUUID()}}:w`];
  for (const key of keys) expect(keySlot(key)).toBe(Number(cluster.cli(cluster.ports[0]!, 'CLUSTER', 'KEYSLOT', key).trim()));
});
