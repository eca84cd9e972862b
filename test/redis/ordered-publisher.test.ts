import { Redis } from 'ioredis';
import { connectRedis, createOrderedPublisher, PublishStalledError, whenReady, type RedisClient } from '../../src/store/redis';
import { startRedis, startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { until } from '../helpers/until';

// The ordered publisher on a real three-master Redis Cluster whose nodes are deemed failed only
// after 30 s: within a test, a stopped master stays the cluster's (and a client's) master.

jest.setTimeout(60_000);

const STALL_MS = 300;
const CHANNEL = 'dispatch:test:ordered';

let cluster: TestRedisCluster;
let client: RedisClient;
// Every port has five digits, so the lowest is the first master by address.
let first: number;
let second: number;
let subscriber: Redis;
const heard: string[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster(3, 0, { nodeTimeoutMs: 30_000 });
  [first, second] = [...cluster.ports].sort((a, b) => a - b) as [number, number];
  client = connectRedis(cluster.url, { queueWhileDown: true });
  expect(await whenReady(client, 10_000)).toBe(true);
  // Through the cluster bus, a subscriber on any node hears what is published on any other.
  subscriber = new Redis({ host: '127.0.0.1', port: second });
  subscriber.on('message', (_channel: string, message: string) => void heard.push(message));
  await subscriber.subscribe(CHANNEL);
});
afterAll(async () => {
  subscriber?.disconnect();
  client?.disconnect();
  await cluster?.close();
});
afterEach(() => {
  for (const port of cluster.ports) cluster.signal(port, 'SIGCONT');
});

const heardAll = (...messages: string[]) => until(() => (messages.every((m) => heard.includes(m)) ? true : undefined), `${messages.join(', ')} on the subscriber`, 5_000);

test('a PUBLISH a stopped master holds fails within stallMs; the next go through another master, and the held one arrives once it resumes', async () => {
  const publisher = createOrderedPublisher(client, { stallMs: STALL_MS });
  await publisher.publish(CHANNEL, 'before');
  await heardAll('before');

  cluster.signal(first, 'SIGSTOP');
  const started = Date.now();
  await expect(publisher.publish(CHANNEL, 'held')).rejects.toThrow(new PublishStalledError(`redis master 127.0.0.1:${first} did not answer a PUBLISH within ${STALL_MS} ms; it may still be delivered`));
  const waited = Date.now() - started;
  expect(waited).toBeGreaterThanOrEqual(STALL_MS - 20);
  expect(waited).toBeLessThan(STALL_MS + 1_000);
  await publisher.publish(CHANNEL, 'after-1');
  await publisher.publish(CHANNEL, 'after-2');
  await heardAll('after-1', 'after-2');
  expect(heard.indexOf('after-1')).toBeLessThan(heard.indexOf('after-2'));
  expect(heard).not.toContain('held');

  cluster.signal(first, 'SIGCONT');
  await publisher.publish(CHANNEL, 'resumed');
  await heardAll('held', 'resumed');
});

test('when every master has stalled, the one that stalled longest ago is used: a publish is never refused', async () => {
  const publisher = createOrderedPublisher(client, { stallMs: STALL_MS });
  const [a, b, c] = [...cluster.ports].sort((x, y) => x - y);
  for (const port of cluster.ports) cluster.signal(port, 'SIGSTOP');
  const tried: string[] = [];
  for (let n = 0; n < 4; n++) {
    const error = await publisher.publish(CHANNEL, `all-stopped-${n}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PublishStalledError);
    tried.push(/127\.0\.0\.1:(\d+)/.exec((error as Error).message)![1]!);
  }
  expect(tried).toEqual([a, b, c, a].map(String));
  for (const port of cluster.ports) cluster.signal(port, 'SIGCONT');
  await publisher.publish(CHANNEL, 'all-resumed');
  await heardAll('all-resumed');
});

test('rejects bounds that are not positive integers, naming them', () => {
  expect(() => createOrderedPublisher(client, { stallMs: 0 })).toThrow('ordered publisher: stallMs must be a positive integer, got 0');
  expect(() => createOrderedPublisher(client, { avoidMs: 1.5 })).toThrow('ordered publisher: avoidMs must be a positive integer, got 1.5');
});

test('on standalone Redis it publishes through the client', async () => {
  const server = await startRedis({ own: true });
  const standalone = connectRedis(server.url);
  const listener = new Redis({ host: '127.0.0.1', port: server.port });
  try {
    await listener.subscribe(CHANNEL);
    // A store connection refuses commands until it is ready (it does not queue them).
    expect(await whenReady(standalone, 10_000)).toBe(true);
    expect(await createOrderedPublisher(standalone).publish(CHANNEL, 'standalone')).toBe(1);
  } finally {
    listener.disconnect();
    standalone.disconnect();
    await server.close();
  }
});
