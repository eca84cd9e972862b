import { Redis } from 'ioredis';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import type { TestRedis } from '../helpers/redis-server';
import { json, maxInFlight, type ToolServer } from '../helpers/servers';
import { callOn, closeReplicaPair, startReplicaPair, type Replica } from './replica-pair';
import { expectQuickHandoffs, HANDOFF_POLICY, handoffTool } from './slot-handoffs';

// A `shared: true` concurrency cap holds for every replica together: two apps sharing a real
// Redis, and a real HTTP tool that records overlap. A slot left by a replica that died frees
// itself at the end of its lease; while Redis is away, each replica's own slots apply.

jest.setTimeout(30_000);

const yaml = (url: string) => `
tools:
  - name: capped
    effect: read_only
    timeout_ms: 2000
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/capped" }
  - name: queued
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/queued" }
  - name: strict
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/capped" }
  - name: narrow
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/capped" }
  - name: fair
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/fair" }
  - name: brief
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/brief" }
${handoffTool(url)}
policies:
  - match: capped
    concurrency: { max_in_flight: 2, shared: true }
  - match: queued
    concurrency: { max_in_flight: 1, wait_ms: 5000, shared: true }
${HANDOFF_POLICY}
  - match: strict
    concurrency: { max_in_flight: 2, shared: true, fail_closed: true }
  - match: narrow
    concurrency: { max_in_flight: 4, shared: true, fallback_max_in_flight: 1 }
  - match: fair
    concurrency: { max_in_flight: 1, wait_ms: 5000, shared: true }
  - match: brief
    concurrency: { max_in_flight: 1, wait_ms: 350, shared: true }
`;

let redis: TestRedis;
let tools: ToolServer;
let a: Replica;
let b: Replica;
beforeAll(async () => ({ redis, tools, a, b } = await startReplicaPair(yaml, { '/capped': json({ ok: true }, 300), '/queued': json({ ok: true }, 200), '/handoff': json({ ok: true }, 450), '/brief': json({ ok: true }, 250), '/fair': json({ ok: true }, 200) })));
afterAll(() => closeReplicaPair({ redis, tools, a, b }));
beforeEach(() => tools.received.splice(0));

test('two replicas together run at most max_in_flight; the others are refused, saying so', async () => {
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => callOn(i % 2 === 0 ? a : b, 'capped')));
  expect(results.filter((r) => !r.isError)).toHaveLength(2);
  for (const r of results.filter((x) => x.isError)) {
    expect(r.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(r.error?.message).toBe('tool "capped" is at its limit of 2 calls running at once on all dispatch replicas together; this call was not executed');
  }
  expect(tools.count('/capped')).toBe(2);
});

test('with wait_ms, calls on both replicas take turns: all run, one at a time', async () => {
  // What the replicas say they hold (the in-flight gauge's source), sampled while the calls run.
  const held = new Set<number>();
  const inUse = (app: typeof a) => app.app.deps.guards.slots!.inUse().get('queued') ?? 0;
  const sampler = setInterval(() => held.add(inUse(a) + inUse(b)), 10);
  const results = await Promise.all([callOn(a, 'queued'), callOn(b, 'queued'), callOn(a, 'queued'), callOn(b, 'queued')]).finally(() => clearInterval(sampler));
  expect(Math.max(...held)).toBe(1);
  expect(results.every((r) => !r.isError)).toBe(true);
  expect(tools.count('/queued')).toBe(4);
  expect(maxInFlight(tools.received)).toBe(1);
});

test('a call waiting on one replica starts as soon as the other gives the slot back, not at its next try', async () => {
  await expectQuickHandoffs(a, b, tools);
});

test('waiting calls get the slot in the order they asked for it, whichever replica they wait on', async () => {
  // One holds the slot; five more ask on alternating replicas, each once the one before it is in
  // line or running (not after a fixed delay, which a loaded machine can invert). At each release
  // every waiter tries, and only the one first in line may take it.
  const direct = new Redis(redis.url);
  const ordered = (app: Replica, order: number) => app.dispatch.dispatch({ sessionId: `fair-${order}`, calls: [{ id: 'c', name: 'fair', arguments: `{"order":${order}}` }] }).then((r) => r.results[0]!);
  const asked = async (count: number) => {
    for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 5))) {
      if (tools.count('/fair') + (await direct.zcard('dispatch:slots:{fair}:line')) >= count) return;
    }
    throw new Error(`${count} calls did not reach the line in 10 s`);
  };
  try {
    const results: Promise<Awaited<ReturnType<typeof ordered>>>[] = [];
    for (const [order, app] of [a, b, a, b, a, b].entries()) {
      await asked(order);
      results.push(ordered(app, order));
    }
    expect((await Promise.all(results)).map((r) => r.error?.message ?? 'ok')).toEqual(Array(6).fill('ok'));
  } finally {
    direct.disconnect();
  }
  const runs = tools.received.filter((r) => r.path === '/fair').sort((x, y) => x.start - y.start);
  expect(runs.map((r) => (r.body.arguments as { order: number }).order)).toEqual([0, 1, 2, 3, 4, 5]);
});

test('a call waiting in line on a replica that died is passed over once it stops trying', async () => {
  // As a replica would leave it: first in line, its place lapsing in 600 ms (as if it last tried
  // 2.4 s ago; a place lasts 3 s after each try), never to try again.
  const direct = new Redis(redis.url);
  const time = await direct.time();
  const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
  await direct.zadd('dispatch:slots:{fair}:line', 0, 'dead-waiter');
  await direct.zadd('dispatch:slots:{fair}:alive', now + 600, 'dead-waiter');
  direct.disconnect();
  const asked = Date.now();
  expect((await callOn(a, 'fair')).isError).toBe(false);
  // The slot was free all along, but the dead call was first in line until its place lapsed.
  expect(Date.now() - asked).toBeGreaterThanOrEqual(500);
  expect(Date.now() - asked).toBeLessThan(2_500);
});

test('a waiting call gets a slot that comes free near the end of its wait', async () => {
  // The slot is held for 250 ms of the waiter's 350: it must be taken, not refused because the
  // next timed try would have fallen past the wait.
  const first = callOn(a, 'brief');
  await new Promise((r) => setTimeout(r, 20));
  const results = await Promise.all([first, callOn(b, 'brief')]);
  expect(results.map((r) => r.error?.message ?? 'ok')).toEqual(['ok', 'ok']);
  expect(maxInFlight(tools.received)).toBe(1);
});

test('a slot held by a replica that died frees itself at the end of its lease', async () => {
  // As a replica would leave it: both slots of `capped` leased for another second, never released.
  const direct = new Redis(redis.url);
  const time = await direct.time();
  const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
  await direct.zadd('dispatch:slots:{capped}', now + 1_000, 'dead-1', now + 1_000, 'dead-2');
  direct.disconnect();
  expect((await callOn(a, 'capped')).error?.kind).toBe(ErrorKind.UNAVAILABLE);
  await new Promise((r) => setTimeout(r, 1_100));
  expect((await callOn(a, 'capped')).isError).toBe(false);
});

test('while Redis is away, each replica caps with its own slots (or its fallback cap, or none run: fail_closed), and nothing hangs', async () => {
  await redis.stop();
  try {
    const started = Date.now();
    const results = await Promise.all([callOn(a, 'capped'), callOn(a, 'capped'), callOn(a, 'capped'), callOn(b, 'capped')]);
    // Two on a (its own cap of 2), one on b: one call of a's three is refused, saying whose cap.
    expect(results.filter((r) => !r.isError)).toHaveLength(3);
    expect(results.find((r) => r.isError)?.error?.message).toBe('tool "capped" is at its limit of 2 calls running at once on this dispatch replica; this call was not executed');
    expect(tools.count('/capped')).toBe(3);
    expect(Date.now() - started).toBeLessThan(5_000);

    // fallback_max_in_flight caps each replica tighter while Redis is away: 1 of 3 runs.
    const narrow = await Promise.all([callOn(a, 'narrow'), callOn(a, 'narrow'), callOn(a, 'narrow')]);
    expect(narrow.filter((r) => !r.isError)).toHaveLength(1);
    expect(narrow.find((r) => r.isError)?.error?.message).toBe('tool "narrow" is at its limit of 1 call running at once on this dispatch replica; this call was not executed');
    // fail_closed refuses every call while Redis is away.
    const strict = await Promise.all([callOn(a, 'strict'), callOn(b, 'strict')]);
    for (const r of strict) {
      expect(r.error?.kind).toBe(ErrorKind.UNAVAILABLE);
      expect(r.error?.message).toBe('tool "strict" has a concurrency cap shared by all dispatch replicas through Redis, which is failing, and the cap is fail_closed; this call was not executed');
    }
    expect(tools.count('/capped')).toBe(4);
  } finally {
    await redis.start();
  }
});
