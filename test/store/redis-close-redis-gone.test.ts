// With Redis gone (killed), ioredis 6 ended a reconnecting connection by ending its socket, closed
// already, with a 2 s timer to destroy it: app.close() left one such timer per connection (8 for
// a standalone Redis) and those connections never ended, nor their dead-socket checks. A Cluster
// client with every node gone never ended on QUIT. Both now end at once.
import type { Cluster } from 'ioredis';
import { closeWithin, connectRedis, whenReady, type RedisClient } from '../../src/store/redis';
import { startRedis, startRedisCluster, startSentinel, type TestRedis } from '../helpers/redis-server';
import { watchResources } from '../helpers/left-running';
import { startApp } from '../helpers/servers';

jest.setTimeout(20_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Resolves once `client` is reconnecting (its socket closed, the next try not begun). */
async function reconnecting(client: RedisClient): Promise<void> {
  for (const deadline = Date.now() + 5_000; client.status !== 'reconnecting'; await sleep(5)) if (Date.now() > deadline) throw new Error(`still ${client.status}`);
}

let redis: TestRedis;
beforeEach(async () => {
  redis = await startRedis({ own: true });
});
afterEach(() => redis.close());

for (const when of ['while it reconnects', 'right after it was killed']) {
  test(`an app whose Redis was killed closes within 500 ms and leaves no timer or socket behind (${when})`, async () => {
    await sleep(50);
    const watched = watchResources();
    const app = await startApp('', { redisUrl: redis.url });
    await redis.stop();
    if (when === 'while it reconnects') await sleep(300);
    const started = Date.now();
    await app.close();
    expect(Date.now() - started).toBeLessThan(500);
    await sleep(50);
    expect(watched.left()).toEqual([]);
  });
}

test('closeWithin ends a reconnecting Sentinel client at once, its connections to the Sentinel too', async () => {
  const sentinel = await startSentinel(redis.port, 'gone');
  try {
    await sleep(50);
    const watched = watchResources();
    const client = connectRedis(`redis-sentinel://127.0.0.1:${sentinel.port}/gone`, { queueWhileDown: true });
    expect(await whenReady(client, 5_000)).toBe(true);
    await redis.stop();
    await reconnecting(client);
    const started = Date.now();
    await closeWithin(client, 1_000);
    expect(Date.now() - started).toBeLessThan(500);
    expect(client.status).toBe('end');
    await sleep(50);
    expect(watched.left()).toEqual([]);
  } finally {
    await sentinel.close();
  }
});

test('closeWithin ends a Cluster client whose nodes were all killed at once', async () => {
  const cluster = await startRedisCluster(3);
  try {
    const client = connectRedis(cluster.url, { queueWhileDown: true });
    expect(await whenReady(client, 5_000)).toBe(true);
    // Every node connected: each ends when killed, and with none left the client reconnects.
    await Promise.all((client as Cluster).nodes('all').map((node) => node.ping()));
    for (const port of cluster.ports) cluster.signal(port, 'SIGKILL');
    await reconnecting(client);
    const started = Date.now();
    await closeWithin(client, 1_000);
    expect(Date.now() - started).toBeLessThan(500);
    expect(client.status).toBe('end');
  } finally {
    await cluster.close();
  }
});
