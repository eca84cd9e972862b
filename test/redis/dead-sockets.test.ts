import type { Cluster, Redis } from 'ioredis';
import { connectRedis, whenReady, type RedisClient } from '../../src/store/redis';
import { startRedis, startRedisCluster, type TestRedis } from '../helpers/redis-server';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { until } from '../helpers/until';

// A connection with commands waiting and no byte from Redis for deadSocketMs is dropped and made
// again: behind a proxy that stops forwarding without closing (a half-open connection, as a Redis
// whose host vanished leaves), the client recovers on a new connection; without the drop it would
// wait for the kernel (~15 minutes). On real redis-server processes.

jest.setTimeout(30_000);

const DEAD_MS = 1_000;
const clients: RedisClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});
const connect = (...args: Parameters<typeof connectRedis>) => {
  const client = connectRedis(...args);
  clients.push(client);
  return client;
};

describe('a standalone Redis', () => {
  let redis: TestRedis;
  let proxy: TcpProxy;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    proxy = await startTcpProxy(redis.port);
  });
  afterAll(async () => {
    await proxy?.close();
    await redis?.close();
  });

  test('behind a half-open connection, commands fail until the connection is dropped, then succeed on a new one', async () => {
    const client = connect(`redis://127.0.0.1:${proxy.port}`, { commandTimeoutMs: 200, deadSocketMs: DEAD_MS }) as Redis;
    expect(await whenReady(client, 5_000)).toBe(true);
    await client.set('k', 'v');
    const before = client.stream;
    proxy.freeze();
    const frozen = performance.now();
    await expect(client.get('k')).rejects.toThrow(/timed out/i);
    const value = await until(() => client.get('k').catch(() => undefined) as Promise<string | undefined>, 'a reply on a new connection', 10_000);
    expect(value).toBe('v');
    expect(client.stream).not.toBe(before);
    const took = performance.now() - frozen;
    expect(took).toBeGreaterThanOrEqual(DEAD_MS);
    expect(took).toBeLessThan(DEAD_MS * 1.25 + 2_000);
  });

  test('a connection that queues while Redis is away sends its waiting PUBLISH again on the new connection', async () => {
    const client = connect(`redis://127.0.0.1:${proxy.port}`, { queueWhileDown: true, deadSocketMs: DEAD_MS }) as Redis;
    const listener = connect(redis.url, { queueWhileDown: true }) as Redis;
    const heard: string[] = [];
    listener.on('message', (_channel: string, message: string) => heard.push(message));
    await listener.subscribe('half-open');
    expect(await whenReady(client, 5_000)).toBe(true);
    proxy.freeze();
    const receivers = await client.publish('half-open', 'after the freeze');
    expect(receivers).toBe(1);
    // The listener's own connection brings the message, maybe after the publisher's reply.
    await until(() => (heard.length > 0 ? true : undefined), 'the message on the listener', 2_000);
    expect(heard).toEqual(['after the freeze']);
  });

  test('a Redis that answers within deadSocketMs keeps its connection', async () => {
    const client = connect(redis.url, { commandTimeoutMs: 200, deadSocketMs: DEAD_MS }) as Redis;
    expect(await whenReady(client, 5_000)).toBe(true);
    const before = client.stream;
    redis.signal('SIGSTOP');
    try {
      await expect(client.ping()).rejects.toThrow(/timed out/i);
      await new Promise((r) => setTimeout(r, DEAD_MS / 2));
    } finally {
      redis.signal('SIGCONT');
    }
    expect(await client.ping()).toBe('PONG');
    expect(client.stream).toBe(before);
  });

  test('an idle connection is kept however long Redis is silent', async () => {
    const client = connect(redis.url, { commandTimeoutMs: 200, deadSocketMs: 200 }) as Redis;
    expect(await whenReady(client, 5_000)).toBe(true);
    const before = client.stream;
    await new Promise((r) => setTimeout(r, 800));
    expect(client.stream).toBe(before);
    expect(client.status).toBe('ready');
  });

  test('deadSocketMs must be a positive integer', () => {
    expect(() => connectRedis(redis.url, { deadSocketMs: 0 })).toThrow(/deadSocketMs/);
  });
});

test('on a Redis Cluster, the connection to a node that stopped is dropped, and made again once it answers', async () => {
  const cluster = await startRedisCluster(3, 0, { nodeTimeoutMs: 60_000 });
  try {
    // Slots read every 500 ms rather than 5 s: the node is learnt again sooner once its connection went.
    const client = connect(cluster.url, { commandTimeoutMs: 200, deadSocketMs: DEAD_MS, slotsRefreshMs: 500 }) as Cluster;
    expect(await whenReady(client, 10_000)).toBe(true);
    const port = cluster.ports[0]!;
    const node = () => client.nodes('master').find((n) => n.options.port === port);
    expect(await node()!.ping()).toBe('PONG');
    const before = node()!.stream;
    cluster.signal(port, 'SIGSTOP');
    try {
      await expect(node()!.ping()).rejects.toThrow(/timed out/i);
      await until(() => (before.destroyed ? true : undefined), 'the stalled node connection dropped', 5_000);
    } finally {
      cluster.signal(port, 'SIGCONT');
    }
    // The Cluster client forgets a node whose connection ended, and learns it again from the slots.
    expect(await until(() => node()?.ping().catch(() => undefined), 'the node answering again', 10_000)).toBe('PONG');
  } finally {
    await cluster.close();
  }
});
