import { Redis } from 'ioredis';
import { connectRedis, createOrderedPublisher, createWatchedSubscriber, dropConnections, type RedisClient, type WatchedSubscriber } from '../../src/store/redis';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { until } from '../helpers/until';

// Every node of a Cluster killed at once and down for three seconds: the subscriber's connection
// closes, and it moves every maxMissedProbes + 1 intervals to another node that is down too (ten
// moves). Once the nodes are back (their cluster config kept, their data gone), it must subscribe
// again by itself and tell its owner that messages were lost.

jest.setTimeout(60_000);

const PROBE_MS = 100;

let cluster: TestRedisCluster;
let client: RedisClient | undefined;
let sub: WatchedSubscriber | undefined;

beforeAll(async () => {
  cluster = await startRedisCluster(3, 0, { nodeTimeoutMs: 60_000 });
});

afterAll(async () => {
  await sub?.close();
  if (client) dropConnections(client);
  await cluster?.close();
});

test('a subscriber whose Cluster went down whole (every node killed) hears again once the nodes are back, and says messages were lost', async () => {
  client = connectRedis(cluster.url, { queueWhileDown: true });
  const publisher = createOrderedPublisher(client, { stallMs: 300 });
  sub = createWatchedSubscriber({ name: 'test', connect: () => connectRedis(cluster.url, { queueWhileDown: true }), publisher, probeIntervalMs: PROBE_MS, maxMissedProbes: 2 });
  const heard: string[] = [];
  let moves = 0;
  sub.onMessage((channel, message) => void (channel === 'watched' && heard.push(message)));
  sub.onMoved(() => void moves++);
  await sub.subscribe('watched');

  const publishUntilHeard = async (what: string) => {
    let n = 0;
    await until(
      async () => {
        const direct = new Redis({ host: '127.0.0.1', port: cluster.ports[n++ % cluster.ports.length]!, lazyConnect: true, maxRetriesPerRequest: 0 });
        try {
          await direct.publish('watched', `${what} ${n}`);
        } catch {
          // A node still starting: the next one.
        } finally {
          direct.disconnect();
        }
        return heard.some((m) => m.startsWith(what)) ? true : undefined;
      },
      what,
      20_000,
    );
  };
  await publishUntilHeard('before');

  await Promise.all(cluster.ports.map((port) => cluster.kill(port)));
  // Down for ten times maxMissedProbes + 1 intervals: the subscriber gives up connection after connection.
  await new Promise((r) => setTimeout(r, 30 * PROBE_MS));
  for (const port of cluster.ports) await cluster.restart(port);

  await publishUntilHeard('after');
  expect(moves).toBeGreaterThanOrEqual(1);
});
