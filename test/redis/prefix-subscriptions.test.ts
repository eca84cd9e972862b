import { randomUUID } from 'node:crypto';
import type { SessionScope } from '../../src/store';
import { connectRedis, createRedisStore, whenReady, type RedisClient, type RedisStore } from '../../src/store/redis';
import { REQUIRED_ACL } from '../../src/store/redis/misconfiguration';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A store under its own prefix (RedisStoreOptions.prefix) whose user is granted that prefix's keys
// and channels, as docs/redis.md's ACL section says (`~acme:* &acme:*`), passed the ACL probe and
// served, but its subscription to other replicas' session ends and resource writes never took:
// the watched subscriber SUBSCRIBEs its own probe channel together with the store's channels, and
// that channel was `dispatch:probe:...` whatever the prefix. The store's channels, subscribed one
// by one at first, were heard for ~3 s; the probe channel never being confirmed, the subscriber
// then moved to a new connection, whose SUBSCRIBE of all its channels at once Redis refused whole
// (NOPERM): from then on no other replica's EndSession or write reached this one's memo cache, and
// the subscriber moved again every three probe intervals, for good.

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let redis: TestRedis;
const stores: RedisStore[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
  redis.cli('ACL', 'SETUSER', 'acme', 'reset', 'on', '>pw', ...REQUIRED_ACL.replace('~dispatch:* &dispatch:*', '~acme:* &acme:*').split(' '));
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await redis?.close();
});

const url = () => `redis://acme:pw@127.0.0.1:${redis.port}/0`;

async function acmeStore(): Promise<RedisStore> {
  const client: RedisClient = connectRedis(url(), { env: {}, maxReconnectDelayMs: 100, prefix: 'acme' });
  expect(await whenReady(client, 5_000)).toBe(true);
  const store = createRedisStore(client, { prefix: 'acme', connectSubscriber: () => connectRedis(url(), { env: {}, queueWhileDown: true, prefix: 'acme' }) });
  stores.push(store);
  return store;
}

test("under its own prefix and an ACL of that prefix's keys and channels, a store hears the sessions another replica ends and the resources it writes", async () => {
  const [one, other] = [await acmeStore(), await acmeStore()];
  const ended: SessionScope[] = [];
  const written: string[] = [];
  other.onSessionEnd((scope) => void ended.push(scope));
  other.onWriteAnnounced!((resource) => void written.push(resource));
  // Past three probe intervals (1 s each), when a subscription whose probes are never heard moves.
  await sleep(4_500);
  const scope = { tenant: 't', sessionId: `s-${randomUUID()}` };
  // Once subscribed: what is announced before is not heard.
  const deadline = Date.now() + 5_000;
  while ((ended.length === 0 || written.length === 0) && Date.now() < deadline) {
    await one.endSession(scope);
    one.announceWrite!('t\u0000file:/a');
    await sleep(100);
  }
  expect(ended[0]).toEqual(scope);
  expect(written[0]).toBe('t\u0000file:/a');
});
