import { create } from '@bufbuild/protobuf';
import type { Redis } from 'ioredis';
import { EventKind, EventSchema, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { createEventBus, createRedisRelay, encodeBatch, type EventBus, type RedisRelay, type Subscription, type TenantEvent } from '../../src/events';
import type { TenantLoss, TenantSequence } from '../../src/events/relay-codec';
import { SILENT_LOGGER, type Logger } from '../../src/log';
import { connectRedis } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

// Counts of lost events ride in a batch's sequence like its events: a batch that never arrives,
// or arrives after a later one, or fails at its sender and is delivered after all, counts what it
// lost exactly once at a receiver. One real redis-server; receiver B is a relay, the senders are
// either a relay A or batches published straight on the channel (as a sender would).

const event = (n: number): Event => create(EventSchema, { sessionId: 's', tool: 'echo', kind: EventKind.TOOL_PRE, name: `e${n}` });
const hooks = { wake: () => undefined, closed: () => undefined };

let redis: TestRedis;
let raw: Redis;
let busB: EventBus;
let relayB: RedisRelay;
const open: Subscription[] = [];

beforeAll(async () => {
  redis = await startRedis({ own: true });
  raw = connectRedis(redis.url, { queueWhileDown: true }) as Redis;
  busB = createEventBus();
  relayB = createRedisRelay({ bus: busB, logger: SILENT_LOGGER, heartbeatMs: 1_000, connect: () => connectRedis(redis.url, { queueWhileDown: true }) });
});
afterAll(async () => {
  for (const sub of open) sub.close();
  raw?.disconnect();
  await relayB?.close();
  await redis?.close();
});

const subscribe = (tenant: string) => {
  const sub = busB.subscribe(tenant, { sessionId: '' }, hooks)!;
  open.push(sub);
  return sub;
};
/** What `sub` received so far, and the events counted dropped before them. */
const drain = (sub: Subscription, into: { names: string[]; dropped: number }) => {
  for (let e = sub.next(); e; e = sub.next()) {
    into.names.push(e.name);
    into.dropped += Number(e.dropped);
  }
  return into;
};

describe('batches published straight on the channel', () => {
  /** A batch of sender "replica-x", of one tenant. */
  const batch = (tenant: string, events: readonly number[], losses: readonly Omit<TenantLoss, 'tenant'>[], sequence: Omit<TenantSequence, 'tenant'>) =>
    encodeBatch(
      'replica-x',
      events.map((n): TenantEvent => ({ tenant, event: event(n) })),
      losses.map((loss) => ({ tenant, ...loss })),
      [{ tenant, ...sequence }],
    );
  const lost2 = { sessionId: 's', tool: 'echo', kind: EventKind.TOOL_PRE, count: 2 };

  /** Publishes `batches` in order once B listens (a probe of a tenant of its own reached it), then reads `tenant` until `last` arrives. */
  async function receive(tenant: string, batches: readonly string[], last: string) {
    const sub = subscribe(tenant);
    const probe = subscribe(`${tenant}-probe`);
    let probes = 0;
    await until(() => {
      void raw.publish('dispatch:events', batch(`${tenant}-probe`, [probes], [], { before: probes++, count: 1 }));
      return probe.next() ? true : undefined;
    }, 'B listening');
    for (const message of batches) await raw.publish('dispatch:events', message);
    const got = { names: [] as string[], dropped: 0 };
    await until(() => (drain(sub, got).names.includes(last) ? true : undefined), `${last} on B`);
    await new Promise((r) => setTimeout(r, 100));
    return drain(sub, got);
  }

  test('a batch with losses that arrives after a later one counts its events and its losses once, in the gap, and delivers neither', async () => {
    // Events e0..e5 and 2 lost between e0 and e1: batch 1 carries e1 and the summary of the two
    // (count 3), batch 2 (e2..e4, before 4) arrives first, batch 1 after it.
    const got = await receive(
      'late-losses',
      [
        batch('late-losses', [0], [], { before: 0, count: 1 }),
        batch('late-losses', [2, 3, 4], [], { before: 4, count: 3 }),
        batch('late-losses', [1], [lost2], { before: 1, count: 3 }),
        batch('late-losses', [5], [], { before: 7, count: 1 }),
      ],
      'e5',
    );
    expect(got.names).toEqual(['e0', 'e2', 'e3', 'e4', 'e5']);
    expect(got.dropped).toBe(3);
    expect(got.names.length + got.dropped).toBe(6 + 2);
  });

  test("a previous version's sender (counts of events alone, a failed batch's losses sent again): an overtaken batch's losses count once", async () => {
    // Batch 1 (e1, 2 lost) failed at its sender, which sent the summary again on batch 2; batch 1
    // arrives last all the same.
    const got = await receive(
      'late-losses-v1',
      [
        batch('late-losses-v1', [0], [], { before: 0, count: 1 }),
        batch('late-losses-v1', [2], [lost2], { before: 2, count: 1 }),
        batch('late-losses-v1', [1], [lost2], { before: 1, count: 1 }),
        batch('late-losses-v1', [3], [], { before: 3, count: 1 }),
      ],
      'e3',
    );
    expect(got.names).toEqual(['e0', 'e2', 'e3']);
    expect(got.dropped).toBe(1 + 2);
  });
});

/**
 * Relays events of `tenant` from a relay A that publishes on `pub` (and subscribes on a client
 * that waits) to B, and fails one PUBLISH: between `fail` and `recover` A gets five events in one
 * flush period, keeps the last 3 (maxPending) and publishes them with the summary of the first 2,
 * which fails. Then one more event, `last`. Gives what B's subscriber got, and how many A sent
 * since the first event it got.
 */
async function failOnePublish(tenant: string, pub: () => Redis, fail: () => unknown, recover: () => unknown) {
  const warnings: string[] = [];
  const logger: Logger = { ...SILENT_LOGGER, warn: (message) => warnings.push(message) };
  const busA = createEventBus();
  let calls = 0;
  const connect = () => (calls++ === 0 ? pub() : connectRedis(redis.url, { queueWhileDown: true }));
  const relayA = createRedisRelay({ bus: busA, logger, connect, heartbeatMs: 1_000, flushMs: 50, maxPending: 3 });
  const sub = subscribe(tenant);
  try {
    const got = { names: [] as string[], dropped: 0 };
    let n = 0;
    await until(() => {
      busA.publish(tenant, event(n++));
      return drain(sub, got).names.length > 0 ? true : undefined;
    }, 'an event relayed from A to B');
    await new Promise((r) => setTimeout(r, 200));
    drain(sub, got);
    const first = Number(got.names[0]!.slice(1));
    await fail();
    try {
      for (let i = 0; i < 5; i++) busA.publish(tenant, event(n++));
      await until(() => (warnings.includes('event relay: publish failed') ? true : undefined), 'the publish failed', 5_000);
    } finally {
      await recover();
    }
    const last = n++;
    busA.publish(tenant, event(last));
    await until(() => (drain(sub, got).names.includes(`e${last}`) ? true : undefined), 'the event after the failed publish');
    await new Promise((r) => setTimeout(r, 100));
    return { ...drain(sub, got), last, sent: n - first };
  } finally {
    await relayA.close();
  }
}

test('a publish that fails (Redis stopped past the command timeout) and is delivered once Redis resumes counts its losses once', async () => {
  const got = await failOnePublish(
    'stalled',
    () => connectRedis(redis.url, { commandTimeoutMs: 200 }) as Redis,
    () => redis.signal('SIGSTOP'),
    () => redis.signal('SIGCONT'),
  );
  // The failed batch arrived, and the next one did not carry its summary again.
  expect(got.names.slice(-4)).toEqual([3, 2, 1, 0].map((back) => `e${got.last - back}`));
  expect(got.dropped).toBe(2);
  expect(got.names.length + got.dropped).toBe(got.sent);
});

test('a publish that fails and is never delivered counts its events and losses once, as a gap, when the next batch arrives', async () => {
  await raw.call('ACL', 'SETUSER', 'relay-a', 'on', '>secret', '~*', '&*', '+@all');
  const got = await failOnePublish(
    'denied',
    () => connectRedis(`redis://relay-a:secret@127.0.0.1:${redis.port}`, { commandTimeoutMs: 200 }) as Redis,
    () => raw.call('ACL', 'SETUSER', 'relay-a', '-publish'),
    () => raw.call('ACL', 'SETUSER', 'relay-a', '+publish'),
  );
  expect(got.names.slice(-2)).toEqual([`e${got.last - 6}`, `e${got.last}`]);
  expect(got.dropped).toBe(3 + 2);
  expect(got.names.length + got.dropped).toBe(got.sent);
});

test('one warning does not hide another: a publish that fails is logged though an announce failed just before', async () => {
  // Each warning is logged at most once in 10 s; one kind used to silence every other for that long.
  await raw.call('ACL', 'SETUSER', 'relay-mute', 'on', '>secret', '~*', '&*', '+@all', '-publish');
  const warnings: string[] = [];
  const logger: Logger = { ...SILENT_LOGGER, warn: (message) => warnings.push(message) };
  const busA = createEventBus();
  let calls = 0;
  const connect = () =>
    connectRedis(calls++ === 0 ? `redis://relay-mute:secret@127.0.0.1:${redis.port}` : redis.url, { queueWhileDown: true });
  const relayA = createRedisRelay({ bus: busA, logger, connect, heartbeatMs: 1_000, flushMs: 20 });
  subscribe('mute');
  try {
    await until(() => (warnings.includes('event relay: announce failed') ? true : undefined), 'the announce failed');
    let n = 0;
    await until(() => {
      busA.publish('mute', event(n++));
      return warnings.includes('event relay: publish failed') ? true : undefined;
    }, 'the publish failed logged', 5_000);
  } finally {
    await relayA.close();
  }
});
