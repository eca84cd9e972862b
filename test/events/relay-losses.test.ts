import { create } from '@bufbuild/protobuf';
import { EventKind, EventSchema, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { createEventBus, createRedisRelay, encodeBatch, type EventBus, type RedisRelay, type Subscription } from '../../src/events';
import { SILENT_LOGGER } from '../../src/log';
import { connectRedis } from '../../src/store/redis';
import { until } from '../helpers/until';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

// Events one replica could not send to the others (its link to Redis down, or more waiting than
// it keeps) reach the remote subscribers as a count in `dropped`, for exactly the subscribers
// whose filter they pass. Two relays on one real redis-server; replica A reaches Redis through a
// TCP proxy the test can cut, so only A loses its link. Then a third, C, behind its own proxy:
// events A did send while C was cut off count in the dropped of C's subscribers.

const event = (sessionId: string, tool: string, kind: EventKind, n: number): Event => create(EventSchema, { sessionId, tool, kind, name: `e${n}` });


let redis: TestRedis;
let proxy: TcpProxy;
let busA: EventBus;
let busB: EventBus;
let relayA: RedisRelay;
let relayB: RedisRelay;
const open: Subscription[] = [];
const subscribe = (filter: { sessionId?: string; tools?: string[]; kinds?: EventKind[] }) => {
  const sub = busB.subscribe('acme', { sessionId: filter.sessionId ?? '', tools: filter.tools && new Set(filter.tools), kinds: filter.kinds && new Set(filter.kinds) }, { wake: () => undefined, closed: () => undefined })!;
  open.push(sub);
  return sub;
};
/** Everything buffered for `sub`, as [name, dropped]. */
const drain = (sub: Subscription) => {
  const out: [string, number][] = [];
  for (let e = sub.next(); e; e = sub.next()) out.push([e.name, Number(e.dropped)]);
  return out;
};

beforeAll(async () => {
  redis = await startRedis({ own: true });
  proxy = await startTcpProxy(redis.port);
  busA = createEventBus();
  busB = createEventBus();
  const fast = { logger: SILENT_LOGGER, heartbeatMs: 200 };
  relayA = createRedisRelay({ ...fast, bus: busA, connect: () => connectRedis(`redis://127.0.0.1:${proxy.port}`, { queueWhileDown: true, maxReconnectDelayMs: 100 }), flushMs: 50, maxPending: 5 });
  relayB = createRedisRelay({ ...fast, bus: busB, connect: () => connectRedis(redis.url, { queueWhileDown: true }) });
});
afterAll(async () => {
  for (const sub of open) sub.close();
  await relayA?.close();
  await relayB?.close();
  await proxy?.close();
  await redis?.close();
});
afterEach(() => {
  for (const sub of open.splice(0)) sub.close();
});

/**
 * Publishes probes (tool "ping", which the tests' subscribers leave out) on A until B receives
 * one: A knows of B's interest and both links are up. Then waits for A's last flush.
 */
async function relayed(): Promise<void> {
  const probe = subscribe({ tools: ['ping'] });
  await until(() => {
    busA.publish('acme', event('probe', 'ping', EventKind.TURN_END, 0));
    return drain(probe).length > 0 ? true : undefined;
  }, 'a probe event relayed from A to B');
  probe.close();
  await new Promise((r) => setTimeout(r, 100));
}

test('more events than A keeps waiting: the ones it dropped are counted in the dropped of each remote subscriber they would have reached', async () => {
  const all = subscribe({ tools: ['echo'] });
  const s1 = subscribe({ sessionId: 's1' });
  const posts = subscribe({ kinds: [EventKind.TOOL_POST] });
  const other = subscribe({ tools: ['other'] });
  await relayed();
  drain(all);
  // Twelve events in one flush period; A keeps the last 5 (maxPending), so the first 7 are lost:
  // s1 x5 (TOOL_PRE, TOOL_POST alternating, and e2 a turn's end, which names no tool), s2 x2.
  const sessions = ['s1', 's1', 's1', 's1', 's2', 's1', 's2', 's1', 's1', 's1', 's1', 's1'];
  sessions.forEach((s, n) => busA.publish('acme', n === 2 ? event(s, '', EventKind.TURN_END, n) : event(s, 'echo', n % 2 === 0 ? EventKind.TOOL_PRE : EventKind.TOOL_POST, n)));
  const got = await until(() => {
    const d = drain(all);
    return d.length > 0 ? d : undefined;
  }, 'the five kept events');
  // Tool "echo" lost all but the turn's end (6); s1 lost e0, e1, e2, e3, e5 (5); TOOL_POST lost
  // e1, e3, e5 (3); no event of tool "other" was lost.
  expect(got).toEqual([['e7', 6], ['e8', 0], ['e9', 0], ['e10', 0], ['e11', 0]]);
  expect(drain(s1)).toEqual([['e7', 5], ['e8', 0], ['e9', 0], ['e10', 0], ['e11', 0]]);
  expect(drain(posts)).toEqual([['e7', 3], ['e9', 0], ['e11', 0]]);
  expect(drain(other)).toEqual([]);
});

test('events published while A cannot reach Redis are counted in the dropped of the remote subscribers once A is back', async () => {
  const s1 = subscribe({ sessionId: 's1' });
  const echo = subscribe({ tools: ['echo'] });
  await relayed();
  drain(s1);
  drain(echo);
  proxy.cut();
  // A's link is down: these cannot be sent (one flush period apart, so none is lost to the
  // maxPending bound instead).
  for (let n = 0; n < 3; n++) {
    busA.publish('acme', event(n === 1 ? 's2' : 's1', 'echo', EventKind.TOOL_PRE, 100 + n));
    await new Promise((r) => setTimeout(r, 80));
  }
  expect(drain(echo)).toEqual([]);
  proxy.restore();
  // Once A is back, the next batch that goes out carries the count. The probes are of another
  // tool and session: the ones lost while A reconnects count for neither subscriber.
  const ping = subscribe({ tools: ['ping'] });
  await until(() => {
    busA.publish('acme', event('probe', 'ping', EventKind.TURN_END, 0));
    return drain(ping).length > 0 ? true : undefined;
  }, 'A reconnected');
  busA.publish('acme', event('s1', 'echo', EventKind.TURN_END, 200));
  const got = await until(() => {
    const d = drain(echo);
    return d.length > 0 ? d : undefined;
  }, 'an event after A reconnected');
  expect(got).toEqual([['e200', 3]]);
  expect(drain(s1)).toEqual([['e200', 2]]);
});

describe('a receiving replica cut off from Redis', () => {
  let proxyC: TcpProxy;
  let busC: EventBus;
  let relayC: RedisRelay;
  beforeAll(async () => {
    proxyC = await startTcpProxy(redis.port);
    busC = createEventBus();
    relayC = createRedisRelay({ logger: SILENT_LOGGER, heartbeatMs: 200, bus: busC, connect: () => connectRedis(`redis://127.0.0.1:${proxyC.port}`, { queueWhileDown: true, maxReconnectDelayMs: 100 }) });
  });
  afterAll(async () => {
    await relayC?.close();
    await proxyC?.close();
  });

  const onC = (tenant: string, filter: { sessionId?: string } = {}) => {
    const sub = busC.subscribe(tenant, { sessionId: filter.sessionId ?? '' }, { wake: () => undefined, closed: () => undefined })!;
    open.push(sub);
    return sub;
  };
  /** Publishes probes of another tenant on A until C receives one: A hears C's interest, C's link is up. */
  async function reachesC(): Promise<void> {
    const probe = onC('probes');
    await until(() => {
      busA.publish('probes', event('probe', 'ping', EventKind.TURN_END, 0));
      return drain(probe).length > 0 ? true : undefined;
    }, 'a probe relayed from A to C');
    probe.close();
  }
  const next = (sub: Subscription, what: string) =>
    until(() => {
      const d = drain(sub);
      return d.length > 0 ? d : undefined;
    }, what);

  test('events A published while C was cut off count in the dropped of every subscriber of their tenant that C had when A\'s previous batch arrived, at A\'s next batch of that tenant', async () => {
    const all = onC('acme');
    const s9 = onC('acme', { sessionId: 's9' });
    const otherTenant = onC('globex');
    await reachesC();
    busA.publish('acme', event('s1', 'echo', EventKind.TOOL_PRE, 1));
    expect(await next(all, 'the first event on C')).toEqual([['e1', 0]]);
    proxyC.cut();
    // A still holds C's interest (3 heartbeats): it publishes these, and Redis has no link to C.
    for (let n = 2; n <= 5; n++) busA.publish('acme', event('s1', 'echo', EventKind.TOOL_POST, n));
    await new Promise((r) => setTimeout(r, 150));
    expect(drain(all)).toEqual([]);
    proxyC.restore();
    await reachesC();
    // A subscriber that joined after A's last batch before the cut is not charged.
    const late = onC('acme');
    busA.publish('acme', event('s9', 'echo', EventKind.TURN_END, 6));
    // What the four were is not known on C, so they count for s9's subscriber too; not for
    // another tenant's.
    expect(await next(all, 'the event after C reconnected')).toEqual([['e6', 4]]);
    expect(drain(s9)).toEqual([['e6', 4]]);
    expect(drain(late)).toEqual([['e6', 0]]);
    busA.publish('globex', event('s1', 'echo', EventKind.TURN_END, 7));
    expect(await next(otherTenant, 'an event of another tenant')).toEqual([['e7', 0]]);
    // Nothing was missed since: the next batch counts nothing.
    busA.publish('acme', event('s9', 'echo', EventKind.TURN_END, 8));
    expect(await next(all, 'one more event')).toEqual([['e8', 0]]);
  });

  test('events lost while C was cut off count on the first event after them, not on the oldest event a subscriber still holds', async () => {
    const held = onC('held');
    const watch = onC('held');
    await reachesC();
    busA.publish('held', event('s1', 'echo', EventKind.TOOL_PRE, 11));
    busA.publish('held', event('s1', 'echo', EventKind.TOOL_POST, 12));
    expect(await next(watch, 'the two events on C')).toEqual([['e11', 0], ['e12', 0]]);
    proxyC.cut();
    for (let n = 13; n <= 15; n++) busA.publish('held', event('s1', 'echo', EventKind.TOOL_POST, n));
    await new Promise((r) => setTimeout(r, 150));
    proxyC.restore();
    await reachesC();
    busA.publish('held', event('s1', 'echo', EventKind.TURN_END, 16));
    expect(await next(watch, 'the event after C reconnected')).toEqual([['e16', 3]]);
    // `held` read nothing meanwhile: e11 and e12 came before the loss, e16 after it.
    expect(drain(held)).toEqual([['e11', 0], ['e12', 0], ['e16', 3]]);
  });
});

test('a batch that arrives after a later one of its sender is not delivered: its events were counted dropped when the gap showed', async () => {
  // Batches of a sender "X" published straight on the relay's channel (as X would), the second
  // one overtaken by the third: B counts e1 missing when e2 arrives, and then drops e1. Tenants
  // of their own, so the other tests' events do not count.
  const hooks = { wake: () => undefined, closed: () => undefined };
  const sub = busB.subscribe('overtaken', { sessionId: '' }, hooks)!;
  const probe = busB.subscribe('overtaken-probe', { sessionId: '' }, hooks)!;
  open.push(sub, probe);
  const raw = connectRedis(redis.url, { queueWhileDown: true });
  try {
    const batch = (tenant: string, n: number) => encodeBatch('replica-x', [{ tenant, event: event('sx', 'echo', EventKind.TOOL_PRE, n) }], [], [{ tenant, before: n, count: 1 }]);
    let probes = 0;
    await until(() => {
      void raw.publish('dispatch:events', batch('overtaken-probe', probes++));
      return drain(probe).length > 0 ? true : undefined;
    }, 'B listening');
    for (const n of [0, 2, 1, 3]) await raw.publish('dispatch:events', batch('overtaken', n));
    const got: [string, number][] = [];
    await until(() => {
      got.push(...drain(sub));
      return got.length >= 3 ? true : undefined;
    }, 'the delivered events');
    await new Promise((r) => setTimeout(r, 100));
    got.push(...drain(sub));
    // A drop is reported on the next event read, whenever that is: count them all.
    expect(got.map(([name]) => name)).toEqual(['e0', 'e2', 'e3']);
    expect(got.reduce((sum, [, dropped]) => sum + dropped, 0)).toBe(1);
  } finally {
    raw.disconnect();
  }
});
