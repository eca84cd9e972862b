import { connectRedis, whenReady, type RedisClient } from '../../src/store/redis';
import { startRedis, startSentinel, type TestRedis, type TestSentinel } from '../helpers/redis-server';

// A Sentinel URL names several sentinels so that one down does not matter. One that takes the
// connection but never answers (SIGSTOP: its port still accepts) must not hold the master lookup:
// the next sentinel is asked after the command timeout. Real redis-server and sentinels.

jest.setTimeout(30_000);

const NAME = 'stalled-sentinel-master';
let master: TestRedis;
let stopped: TestSentinel;
let healthy: TestSentinel;
let client: RedisClient | undefined;
beforeAll(async () => {
  master = await startRedis({ own: true });
  stopped = await startSentinel(master.port, NAME);
  healthy = await startSentinel(master.port, NAME);
  stopped.signal('SIGSTOP');
});
afterAll(async () => {
  client?.disconnect();
  await stopped?.close();
  await healthy?.close();
  await master?.close();
});

test('a stopped sentinel listed first is passed over for the next one', async () => {
  client = connectRedis(`redis-sentinel://127.0.0.1:${stopped.port},127.0.0.1:${healthy.port}/${NAME}`, { commandTimeoutMs: 300 });
  const started = Date.now();
  expect(await whenReady(client, 10_000)).toBe(true);
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(await client.set('k', 'v')).toBe('OK');
  expect(master.cli('GET', 'k').trim()).toBe('v');
});
