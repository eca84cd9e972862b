import { createEventBus, createRedisRelay, type EventBus, type RedisRelay } from '../../src/events';
import { SILENT_LOGGER } from '../../src/log';
import { connectRedis } from '../../src/store/redis';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { until } from '../helpers/until';
import { relayTraffic } from './relay-traffic';

// The event relay on a real three-master Redis Cluster when the node a receiving replica
// subscribes through stops (SIGSTOP: its connections stay open). Its nodes are deemed failed only
// after 60 s, so no failover can be what gets events through: the receiver's subscription moves.

jest.setTimeout(60_000);

const NODE_TIMEOUT_MS = 60_000;

let cluster: TestRedisCluster;
let busA: EventBus;
let busB: EventBus;
let relayA: RedisRelay;
let relayB: RedisRelay;
let stopped: number | undefined;

beforeAll(async () => {
  cluster = await startRedisCluster(3, 0, { nodeTimeoutMs: NODE_TIMEOUT_MS });
  busA = createEventBus();
  busB = createEventBus();
  const options = { logger: SILENT_LOGGER, connect: () => connectRedis(cluster.url, { queueWhileDown: true }), publishStallMs: 300, probeIntervalMs: 300 };
  relayA = createRedisRelay({ ...options, bus: busA });
  relayB = createRedisRelay({ ...options, bus: busB });
});
afterAll(async () => {
  if (stopped !== undefined) cluster.signal(stopped, 'SIGCONT');
  await relayA?.close();
  await relayB?.close();
  await cluster?.close();
});

test("with the node a receiver subscribes through stopped, events reach it again within seconds; those it missed count as dropped", async () => {
  const t = relayTraffic(busA, busB);
  const first = await t.untilReceived(0, 'an event relayed from A to B', 20_000);

  // Only B listens on the events channel (A has no subscribers): its node is the one counting one.
  const node = cluster.ports.find((port) => cluster.cli(port, 'pubsub', 'numsub', 'dispatch:events').trim().split('\n')[1] === '1')!;
  expect(node).toBeDefined();
  const before = t.sent;
  stopped = node;
  cluster.signal(node, 'SIGSTOP');
  const at = Date.now();
  try {
    await t.untilReceived(before, 'an event sent after the node stopped, on B', 10_000);
    expect(Date.now() - at).toBeLessThan(5_000);
  } finally {
    cluster.signal(node, 'SIGCONT');
    stopped = undefined;
  }

  // Every event sent since the first arrives or is counted dropped (B's gap in A's sequence), in order.
  await t.expectAllAccounted(first);
  t.close();
});
