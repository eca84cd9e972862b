import { create } from '@bufbuild/protobuf';
import { EventKind, EventSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { createEventBus, createRedisRelay, type EventBus, type RedisRelay, type Subscription } from '../../src/events';
import { SILENT_LOGGER } from '../../src/log';
import { connectRedis } from '../../src/store/redis';
import { until } from '../helpers/until';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';

// The event relay on a real three-master Redis Cluster: events cross replicas, in the order they
// were sent, and a stream with nothing lost reports nothing dropped (each batch's sequence must
// follow the one before it, though a Cluster client may send each command through another node).

jest.setTimeout(60_000);

let cluster: TestRedisCluster;
let busA: EventBus;
let busB: EventBus;
let relayA: RedisRelay;
let relayB: RedisRelay;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  busA = createEventBus();
  busB = createEventBus();
  const connect = () => connectRedis(cluster.url, { queueWhileDown: true });
  // Small batches, so one burst goes out as many PUBLISHes.
  relayA = createRedisRelay({ bus: busA, connect, logger: SILENT_LOGGER, heartbeatMs: 1_000, maxBatch: 5, flushMs: 5 });
  relayB = createRedisRelay({ bus: busB, connect, logger: SILENT_LOGGER, heartbeatMs: 1_000 });
});
afterAll(async () => {
  await relayA?.close();
  await relayB?.close();
  await cluster?.close();
});


test('on a Redis Cluster, events cross replicas in order and none is counted as dropped', async () => {
  const received: [string, number][] = [];
  const hooks = { wake: () => undefined, closed: () => undefined };
  const sub: Subscription = busB.subscribe('acme', { sessionId: '' }, hooks)!;
  const drain = () => {
    for (let e = sub.next(); e; e = sub.next()) received.push([e.name, Number(e.dropped)]);
  };
  // A hears B's interest: probes, of a tenant of their own, until one arrives.
  const probe = busB.subscribe('probes', { sessionId: '' }, hooks)!;
  await until(() => {
    busA.publish('probes', create(EventSchema, { kind: EventKind.TURN_END, name: 'probe' }));
    return probe.next() ? true : undefined;
  }, 'a probe relayed from A to B', 20_000);
  probe.close();
  // 20 bursts of 50 events, each burst 10 PUBLISHes of 5.
  const sent: string[] = [];
  for (let burst = 0; burst < 20; burst++) {
    for (let n = 0; n < 50; n++) {
      const name = `e${burst * 50 + n}`;
      sent.push(name);
      busA.publish('acme', create(EventSchema, { kind: EventKind.TOOL_PRE, sessionId: 's', tool: 'echo', name }));
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  await until(() => {
    drain();
    return received.length >= sent.length ? true : undefined;
  }, 'every event on B', 20_000);
  expect(received.map(([name]) => name)).toEqual(sent);
  expect(received.filter(([, dropped]) => dropped > 0)).toEqual([]);
  sub.close();
});
