import { spawnSync } from 'node:child_process';
import { connectRedis, createRedisStore, whenReady, type RedisStore } from '../../src/store/redis';
import { startRedis, startSentinel, type TestRedis, type TestSentinel } from '../helpers/redis-server';
import { until } from '../helpers/until';

// A planned failover (SENTINEL FAILOVER: an upgrade, a node drained) promotes the replica while the
// old master still runs and takes writes: Sentinel demotes it only ~10 s later, and its resync then
// erases what it took meanwhile. A client must leave it when Sentinel announces the new master
// (+switch-master), or a claim made in between is lost and an identical call runs the tool again.
// Real redis-servers (no persistence) and a Sentinel on loopback.

jest.setTimeout(60_000);

const NAME = 'planned-failover-master';
let master: TestRedis;
let replica: TestRedis;
let sentinel: TestSentinel;
const stores: RedisStore[] = [];
beforeAll(async () => {
  master = await startRedis({ own: true });
  replica = await startRedis({ own: true });
  replica.cli('REPLICAOF', '127.0.0.1', String(master.port));
  await until(() => (replica.cli('INFO', 'replication').includes('master_link_status:up') ? true : undefined), 'the replica to sync');
  sentinel = await startSentinel(master.port, NAME, { downAfterMs: 1000, failoverTimeoutMs: 5000 });
  // The sentinel learns of the replica from the master's INFO (every 10 s at first, then 1 s).
  await until(() => (/slave0:.*state=online/.test(master.cli('INFO', 'replication')) && sentinelReplicas() > 0 ? true : undefined), 'the sentinel to see the replica', 20_000);
});
afterAll(async () => {
  for (const store of stores) await store.close();
  await sentinel?.close();
  await replica?.close();
  await master?.close();
});

const sentinelCli = (...args: string[]): string => spawnSync('redis-cli', ['-p', String(sentinel.port), ...args], { encoding: 'utf8', timeout: 5_000 }).stdout;
const sentinelReplicas = (): number => (sentinelCli('SENTINEL', 'REPLICAS', NAME).match(/^ip$/gm) ?? []).length;
/** The idempotency record of `key` on `server`, '' when there is none. */
const recordOn = (server: TestRedis, key: string) => server.cli('GET', `dispatch:{dA:cGxhbm5lZA}:idem:${key}`).trim();

async function sentinelStore(): Promise<RedisStore> {
  const client = connectRedis(`redis-sentinel://127.0.0.1:${sentinel.port}/${NAME}`);
  if (!(await whenReady(client, 10_000))) throw new Error('the sentinel did not lead to a ready master');
  const store = createRedisStore(client);
  stores.push(store);
  return store;
}

const scope = { tenant: 't', sessionId: 'planned' };
const claim = (store: RedisStore, key: string) => store.beginAttempt({ scope, op: 'o', claim: { key, leaseMs: 60_000, owner: `owner-${key}` } });

/** The connections on the sentinel subscribed to its events (the clients' failover detectors). */
const subscribers = () => sentinelCli('CLIENT', 'LIST').split('\n').filter((line) => / sub=[1-9]/.test(line)).length;

test('close ends every connection, the Sentinel subscriptions too, and answers what was sent before it', async () => {
  const client = connectRedis(`redis-sentinel://127.0.0.1:${sentinel.port}/${NAME}`);
  expect(await whenReady(client, 10_000)).toBe(true);
  const store = createRedisStore(client);
  await until(() => (subscribers() === 1 ? true : undefined), 'the client to subscribe to the sentinel');
  const sent = Array.from({ length: 50 }, (_, i) => client.set(`before-close-${i}`, 'x'));
  await store.close();
  expect(await Promise.all(sent)).toEqual(Array(50).fill('OK'));
  await until(() => (client.status === 'end' ? true : undefined), 'the client to end', 2_000);
  await until(() => (subscribers() === 0 ? true : undefined), 'the sentinel to see the subscription closed', 2_000);
});

test('SENTINEL FAILOVER: a claim made once Sentinel names the new master is on it, so an identical call elsewhere finds it in progress', async () => {
  const store = await sentinelStore();
  expect((await claim(store, 'before')).claim).toEqual({ state: 'claimed' });
  await until(() => (recordOn(replica, 'before') === 'Powner-before' ? true : undefined), 'the claim to reach the replica');
  expect(sentinelCli('SENTINEL', 'FAILOVER', NAME).trim()).toBe('OK');
  // Sentinel names the promoted replica (and publishes +switch-master) once it sees it a master.
  await until(() => (sentinelCli('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME).includes(String(replica.port)) ? true : undefined), 'Sentinel to name the replica', 20_000);
  expect(master.cli('ROLE').startsWith('master')).toBe(true);
  await new Promise((r) => setTimeout(r, 500));
  // The client may be reconnecting to the new master: STORE_UNAVAILABLE until it has (no claim is made).
  const claimed = await until(() => claim(store, 'after').then((r) => r.claim, () => undefined), 'a claim through the same store', 10_000);
  expect(claimed).toEqual({ state: 'claimed' });
  // The old master is still a master (Sentinel demotes it seconds later, and its resync then erases
  // whatever it took): the claim must be on the new one, where an identical call on another replica looks.
  expect(master.cli('ROLE').startsWith('master')).toBe(true);
  const other = await sentinelStore();
  expect((await claim(other, 'after')).claim).toEqual({ state: 'in_progress' });
  expect((await claim(other, 'before')).claim).toEqual({ state: 'in_progress' });
  expect(recordOn(replica, 'after')).toBe('Powner-after');
});
