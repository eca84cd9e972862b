import { connectRedis, whenReady, type RedisClient } from '../../src/store/redis';
import { startRedis, startSentinel, type TestRedis, type TestSentinel } from '../helpers/redis-server';

// A clean-clone CI run's Sentinel failover test ended "no failover within 40 s ... its client is
// end": the sentinel had promoted the replica, but the store's client had ended for good. The
// failover detector disconnects the client on +switch-master; arriving while the client was
// reconnecting (the old master killed), its master lookup under way, the lookup found the
// connector closed and ioredis ended the client, which never reconnected: every side-effecting
// call would have failed STORE_UNAVAILABLE until dispatchd restarted. Made certain here: the
// sentinel is frozen (SIGSTOP) so that the lookup waits, and the detector's disconnect is called
// meanwhile, as +switch-master calls it.

jest.setTimeout(30_000);

let master: TestRedis;
let sentinel: TestSentinel;
let client: RedisClient | undefined;
beforeAll(async () => {
  master = await startRedis({ own: true });
  sentinel = await startSentinel(master.port, 'switch');
});
afterAll(async () => {
  client?.disconnect();
  await sentinel.close();
  await master.close();
});

const until = async (what: string, done: () => boolean, ms: number) => {
  for (const deadline = Date.now() + ms; !done(); await new Promise((r) => setTimeout(r, 5))) if (Date.now() > deadline) throw new Error(`not ${what} within ${ms} ms`);
};

test("the failover detector's disconnect during a reconnection's master lookup does not end the client: it connects once the sentinel answers", async () => {
  client = connectRedis(`redis-sentinel://127.0.0.1:${sentinel.port}/switch`, { commandTimeoutMs: 1000 });
  const ready = client;
  expect(await whenReady(ready, 10_000)).toBe(true);
  sentinel.signal('SIGSTOP');
  try {
    ready.disconnect(true);
    await until('connecting', () => ready.status === 'connecting', 5_000);
    // What FailoverDetector.disconnect() does on +switch-master.
    (ready as unknown as { connector: { disconnect(): void } }).connector.disconnect();
  } finally {
    sentinel.signal('SIGCONT');
  }
  await until('ready again', () => ready.status === 'ready' || ready.status === 'end', 10_000);
  expect(ready.status).toBe('ready');
  expect(await ready.call('PING')).toBe('PONG');
});
