import { createHash } from 'node:crypto';
import type { Event } from '../../gen/dispatch/v1/dispatch_pb';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createDispatchClient } from '../../src/client';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, type TestDispatch } from '../helpers/servers';
import { describe as seq, tapEvents, turnEnded, type EventTap } from '../events/event-tap';

// Issue 6, Subscribe: filters by session, tool and kind, tenant isolation, and the bounded buffer's
// `dropped`, each for events of calls that another replica handled (through Redis). The existing
// tests check the filters and the buffer on one replica, and cross-replica delivery unfiltered.

jest.setTimeout(60_000);

const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const YAML = `
limits: { subscriber_buffer: 100 }
auth:
  tokens:
    - { tenant: acme, scopes: [dispatch, subscribe], sha256: ${sha('tok-acme')} }
    - { tenant: globex, scopes: [dispatch, subscribe], sha256: ${sha('tok-globex')} }
tools:
  - { name: echo, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }
  - { name: other, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }
`;
const ACME = { authorization: 'Bearer tok-acme' };
const GLOBEX = { authorization: 'Bearer tok-globex' };

let redis: TestRedis;
let a: TestDispatch;
let b: TestDispatch;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  a = await startApp(YAML, { redisUrl: redis.url });
  b = await startApp(YAML, { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await redis?.close();
});

const turn = (d: TestDispatch, sessionId: string, names: string[], metadata = ACME) =>
  d.dispatch.dispatch({ sessionId, calls: names.map((name, i) => ({ id: `c${i + 1}`, name, arguments: '{}' })) }, { metadata });

/** Dispatches on `a` until `tap` (on `b`) sees it: `a` learns of the subscriber through Redis. */
async function untilRelayed(tap: EventTap): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (let i = 0; ; i++) {
    await turn(a, `probe-${i}`, ['echo']);
    try {
      await tap.waitFor(turnEnded(`probe-${i}`), 200);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
}

test("filters by session, tool and kind hold for another replica's events, and a tenant never sees another's", async () => {
  const all = await tapEvents(b.address, {}, ACME);
  const bySession = await tapEvents(b.address, { sessionId: 'x1' }, ACME);
  const byTool = await tapEvents(b.address, { tools: ['other'] }, ACME);
  const byKind = await tapEvents(b.address, { kinds: [EventKind.TOOL_POST, EventKind.TURN_END] }, ACME);
  const globex = await tapEvents(b.address, {}, GLOBEX);
  const taps = [all, bySession, byTool, byKind, globex];
  try {
    await untilRelayed(all);
    await turn(a, 'x0', ['echo']);
    await turn(a, 'x1', ['echo', 'other']);
    await turn(a, 'x1', ['other'], GLOBEX);
    await turn(a, 'x-end', ['echo']);
    await turn(a, 'x-end', ['echo'], GLOBEX);
    for (const tap of [all, byKind]) await tap.waitFor(turnEnded('x-end'));
    await globex.waitFor(turnEnded('x-end'));
    await new Promise((r) => setTimeout(r, 200));
    const ofX = (events: Event[]) => events.filter((e) => e.sessionId.startsWith('x') && e.sessionId !== 'x-end');
    expect(seq(bySession.events)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'CALL_RECEIVED:c2', 'TOOL_PRE:c2#1', 'TOOL_POST:c2#1', 'TURN_END']);
    expect(ofX(byTool.events).every((e) => e.tool === 'other' && e.sessionId === 'x1')).toBe(true);
    expect(seq(ofX(byTool.events))).toEqual(['CALL_RECEIVED:c2', 'TOOL_PRE:c2#1', 'TOOL_POST:c2#1']);
    expect(seq(ofX(byKind.events))).toEqual(['TOOL_POST:c1#1', 'TURN_END', 'TOOL_POST:c1#1', 'TOOL_POST:c2#1', 'TURN_END']);
    // acme's subscriber: acme's x0 and x1 (4 + 7 events), none of globex's x1 call.
    expect(ofX(all.events)).toHaveLength(11);
    expect(seq(ofX(globex.events))).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'TURN_END']);
    expect(ofX(globex.events).every((e) => e.sessionId === 'x1' && e.tool !== 'echo')).toBe(true);
  } finally {
    for (const tap of taps) tap.close();
  }
});

test("a subscriber that does not read, on another replica than the calls: every event is delivered or counted in dropped", async () => {
  const CALLS = 300;
  const probe = await tapEvents(b.address, {}, ACME);
  const client = createDispatchClient(b.address);
  const stream = client.subscribe({ sessionId: 'load' }, { metadata: ACME });
  stream.on('error', () => undefined);
  try {
    await new Promise((resolve) => stream.once('metadata', resolve));
    await untilRelayed(probe);
    probe.close();
    stream.pause();
    let next = 0;
    const worker = async () => {
      while (next < CALLS) {
        const i = next++;
        const { results } = await a.dispatch.dispatch({ sessionId: 'load', turn: i, calls: [{ id: `c${i}`, name: 'echo', arguments: `{"i":${i}}` }] }, { metadata: ACME });
        expect(results[0]!.isError).toBe(false);
      }
    };
    await Promise.all(Array.from({ length: 10 }, worker));
    await new Promise((r) => setTimeout(r, 300));
    const received: Event[] = [];
    stream.on('data', (e: Event) => received.push(e));
    stream.resume();
    const total = CALLS * 4;
    const accounted = () => received.length + received.reduce((n, e) => n + Number(e.dropped), 0);
    const deadline = Date.now() + 10_000;
    while (accounted() < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 200));
    expect(received.length).toBeLessThan(total);
    expect(received.some((e) => e.dropped > 0n)).toBe(true);
    expect(accounted()).toBe(total);
  } finally {
    stream.cancel();
    client.close();
  }
});
