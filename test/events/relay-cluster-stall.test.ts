import { Redis } from 'ioredis';
import { createEventBus, createRedisRelay, type EventBus, type RedisRelay } from '../../src/events';
import { SILENT_LOGGER } from '../../src/log';
import { connectRedis } from '../../src/store/redis';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { until } from '../helpers/until';
import { relayTraffic } from './relay-traffic';

// The event relay on a real three-master Redis Cluster when the master the relays publish through
// stops (SIGSTOP: its connections stay open). Its nodes are deemed failed only after 30 s, so no
// failover can be what gets events through.

jest.setTimeout(60_000);

const NODE_TIMEOUT_MS = 30_000;

let cluster: TestRedisCluster;
// Every port has five digits, so the lowest is the first master by address: where publishing starts.
let publishing: number;
let busA: EventBus;
let busB: EventBus;
let relayA: RedisRelay;
let relayB: RedisRelay;

beforeAll(async () => {
  cluster = await startRedisCluster(3, 0, { nodeTimeoutMs: NODE_TIMEOUT_MS });
  const [first, second] = [...cluster.ports].sort((a, b) => a - b) as [number, number];
  publishing = first;
  busA = createEventBus();
  busB = createEventBus();
  // Each relay publishes through a Cluster client. It subscribes through a node that is not
  // stopped: a Cluster client subscribes through any node, and one on the stopped node hears nothing.
  const connect = () => {
    let calls = 0;
    return () => (calls++ === 0 ? connectRedis(cluster.url, { queueWhileDown: true }) : new Redis({ host: '127.0.0.1', port: second }));
  };
  relayA = createRedisRelay({ bus: busA, connect: connect(), logger: SILENT_LOGGER, publishStallMs: 300 });
  relayB = createRedisRelay({ bus: busB, connect: connect(), logger: SILENT_LOGGER, publishStallMs: 300 });
});
afterAll(async () => {
  cluster?.signal(publishing, 'SIGCONT');
  await relayA?.close();
  await relayB?.close();
  await cluster?.close();
});

test('with the publishing master stopped, events still cross replicas within seconds; the ones it held count as dropped and are not delivered late', async () => {
  const t = relayTraffic(busA, busB);
  const first = await t.untilReceived(0, 'an event relayed from A to B', 20_000);
  const before = t.sent;
  cluster.signal(publishing, 'SIGSTOP');
  const stopped = Date.now();
  try {
    await t.untilReceived(before, 'an event sent after the master stopped, on B', 5_000);
    expect(Date.now() - stopped).toBeLessThan(NODE_TIMEOUT_MS / 6);
  } finally {
    cluster.signal(publishing, 'SIGCONT');
  }

  // Every event sent since arrives or is counted dropped (those the stopped master held: a gap in A's
  // sequence), and none arrives after a later one (the held batches, delivered on SIGCONT).
  await t.expectAllAccounted(first);
  t.close();
});
