import { Redis } from 'ioredis';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, type TestDispatch } from '../helpers/servers';
import { describe as seq, ECHO_TOOL_YAML, ofSession, tapEvents, turnEnded, type EventTap } from './event-tap';

let redis: TestRedis;
let a: TestDispatch;
let b: TestDispatch;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  a = await startApp(ECHO_TOOL_YAML, { redisUrl: redis.url });
  b = await startApp(ECHO_TOOL_YAML, { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await redis?.close();
});

const once = (d: TestDispatch, sessionId: string) => d.dispatch.dispatch({ sessionId, calls: [{ id: 'c1', name: 'echo', arguments: '{}' }] });

/** Dispatches on `from` until `tap` sees it: the other replica learns of the subscriber through Redis. */
async function untilRelayed(from: TestDispatch, tap: EventTap): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (let i = 0; ; i++) {
    await once(from, `probe-${i}`);
    try {
      await tap.waitFor(turnEnded(`probe-${i}`), 200);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
}

test('a subscriber on one replica sees the calls another replica handles, once each', async () => {
  const onB = await tapEvents(b.address);
  try {
    await untilRelayed(a, onB);
    await once(a, 'remote');
    await once(b, 'local');
    await onB.waitFor(turnEnded('remote'));
    await onB.waitFor(turnEnded('local'));
    const remote = ofSession(onB.events, 'remote');
    expect(seq(remote)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'TURN_END']);
    expect(remote[2]!.parentSpanId).toBe(remote[0]!.spanId);
    expect(remote[2]!.startTime).toBeDefined();
    expect(seq(ofSession(onB.events, 'local'))).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'TURN_END']);
  } finally {
    onB.close();
  }
});

test('with subscribers on both replicas, each sees every event exactly once (no echo of its own batches)', async () => {
  const onA = await tapEvents(a.address, { kinds: [EventKind.TURN_END] });
  const onB = await tapEvents(b.address, { kinds: [EventKind.TURN_END] });
  try {
    await untilRelayed(a, onB);
    await untilRelayed(b, onA);
    for (let i = 0; i < 5; i++) await Promise.all([once(a, `both-a-${i}`), once(b, `both-b-${i}`)]);
    for (const tap of [onA, onB]) await tap.waitFor(turnEnded('both-a-4'));
    for (const tap of [onA, onB]) await tap.waitFor(turnEnded('both-b-4'));
    await new Promise((r) => setTimeout(r, 100));
    for (const tap of [onA, onB]) {
      const sessions = tap.events.map((e) => e.sessionId).filter((s) => s.startsWith('both-'));
      expect(sessions.sort()).toEqual([...Array.from({ length: 5 }, (_, i) => `both-a-${i}`), ...Array.from({ length: 5 }, (_, i) => `both-b-${i}`)].sort());
    }
  } finally {
    onA.close();
    onB.close();
  }
});

test('with nobody subscribed anywhere, no event reaches Redis', async () => {
  // Counted on the events channel: the replicas' subscriptions publish probes of their own.
  const listener = new Redis(redis.url);
  let batches = 0;
  listener.on('message', () => void batches++);
  await listener.subscribe('dispatch:events');
  try {
    const deadline = Date.now() + 20_000;
    // The interest of the earlier subscribers has been withdrawn once no replica lists them.
    while (Date.now() < deadline) {
      const before = batches;
      for (let i = 0; i < 20; i++) await once(a, `quiet-${i}`);
      await new Promise((r) => setTimeout(r, 100));
      if (batches === before) break;
    }
    const before = batches;
    for (let i = 0; i < 50; i++) await once(a, `silent-${i}`);
    await new Promise((r) => setTimeout(r, 100));
    expect(batches).toBe(before);
  } finally {
    listener.disconnect();
  }
});
