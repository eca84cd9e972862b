import { status, type ServiceError } from '@grpc/grpc-js';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { DispatchMode, type DispatchRequestSchema, type DispatchResponse } from '../../gen/dispatch/v1/dispatch_pb';
import type { Observer } from '../../src/pipeline';
import { errorReason } from '../guards/helpers';
import { endings } from '../helpers/endings';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// With a shared store (Redis), a draining replica ends at once an attempt still waiting before
// its tool runs: for a concurrency slot, a rate turn or an approval. Nothing has run and no
// idempotency claim is held yet, so the turn ends UNAVAILABLE SHUTTING_DOWN and the client's retry
// on another replica runs the call once. Before, the wait went on into the grace period: the call
// ran on the draining replica when its slot or turn came within it, and was cut off at its end
// otherwise (an approval: the whole grace period waited for nothing).

jest.setTimeout(30_000);

/** How long the call holding the slot runs; the drain's grace period is longer, so it finishes. */
const HOLD_MS = 1500;
const GRACE_MS = 3000;
/** How soon after the drain's start the waiting call must end (the old code: HOLD_MS or GRACE_MS later). */
const PROMPT_MS = 750;

let redis: TestRedis;
let tools: ToolServer;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({
    '/send': async (req, res) => {
      if ((req.body.arguments as { n: string }).n.startsWith('hold-')) await new Promise((r) => setTimeout(r, HOLD_MS).unref());
      if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end('{"sent":true}');
    },
  });
});
afterAll(async () => {
  await tools?.close();
  await redis?.close();
});

const tool = (name: string, safe = false) => `
  - name: ${name}
    effect: side_effect
    concurrency_safe: ${safe}
    timeout_ms: 5000
    idempotency: { key_fields: ["/n"], ttl_seconds: 600 }
    input_schema: '{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}'
    http: { url: "${tools.url}/send" }`;

const yaml = () => `
tools:${tool('capped_shared')}${tool('capped_local')}${tool('capped_wave', true)}${tool('paced')}${tool('asked')}
policies:
  - match: capped_shared
    concurrency: { max_in_flight: 1, wait_ms: 20000, shared: true }
  - match: [capped_local, capped_wave]
    concurrency: { max_in_flight: 1, wait_ms: 20000 }
  - match: paced
    rate: { per_minute: 24, burst: 1, wait_ms: 20000, shared: true }
  - match: asked
    decide: ask
    reason: a person decides
limits: { approval_timeout_ms: 60000 }
`;

/** Requests the tool received for `n` (each one an execution). */
const executions = (n: string) => tools.received.filter((r) => (r.body.arguments as { n: string }).n === n).length;

type Request = MessageInitShape<typeof DispatchRequestSchema>;
const call = (name: string, n: string, interactive = false): Request => ({ sessionId: `s-${n}`, turn: 1, interactive, calls: [{ id: 'c1', name, arguments: JSON.stringify({ n }) }] });

/** An app on the test's Redis whose calls' endings and approval ids are recorded. */
async function replica() {
  const { observer: ending, ends } = endings();
  const approvals: string[] = [];
  const observer: Observer = {
    ...ending,
    turn: (info) => {
      const turn = ending.turn(info);
      return { ...turn, call: (c) => ({ ...turn.call(c), approvalRequested: (_attempt, id) => void approvals.push(id) }) };
    },
  };
  const app = await startApp(yaml(), { redisUrl: redis.url, pipeline: { observer } });
  return { ...app, ends, approvals };
}

type Replica = Awaited<ReturnType<typeof replica>>;

/**
 * Starts replicas A and B on the test's Redis, awaits `setUp` (what makes A's next call wait),
 * runs `waiting` on A, drains A once `isWaiting` holds, and gives the
 * waiting RPC's error, how long after the drain's start it came, A's call endings and approval
 * ids, and B (open: the caller retries on it, then closes it).
 */
async function drainWhileWaiting(waiting: Request, setUp: (a: Replica) => Promise<unknown>, isWaiting: (a: Replica) => boolean) {
  const a = await replica();
  let b: Replica | undefined;
  let closing: Promise<void> | undefined;
  try {
    b = await replica();
    await setUp(a);
    const pending = a.dispatch.dispatch(waiting).then(() => undefined, (error: ServiceError) => error);
    await until(() => isWaiting(a) || undefined, 'the call waiting');
    // Settled in its wait (not a call about to get through).
    await new Promise((r) => setTimeout(r, 200));
    const drained = Date.now();
    closing = a.app.close(GRACE_MS);
    const error = await pending;
    const elapsed = Date.now() - drained;
    await closing;
    return { error, elapsed, ends: a.ends, approvals: a.approvals, b };
  } catch (error) {
    await b?.close();
    throw error;
  } finally {
    if (closing) {
      a.dispatch.close();
      a.registry.close();
    } else await a.close();
  }
}

function expectShuttingDownAtOnce(error: ServiceError | undefined, elapsed: number, ends: readonly string[]): void {
  expect(error?.code).toBe(status.UNAVAILABLE);
  expect(errorReason(error)).toBe('SHUTTING_DOWN');
  expect(elapsed).toBeLessThan(PROMPT_MS);
  expect(ends).toContain('c1 SHUTTING_DOWN');
}

/** The retry on B: the call runs there once, no replay (nothing had run), no claim in its way. */
async function expectRunOnceOn(b: { dispatch: { dispatch(r: Request): Promise<DispatchResponse> } }, request: Request, n: string, beforeRetry = () => Promise.resolve()) {
  const retried = b.dispatch.dispatch(request);
  await beforeRetry();
  const { results } = await retried;
  expect(results.map((r) => [r.isError, r.idempotentReplay, r.output])).toEqual([[false, false, '{"sent":true}']]);
  expect(executions(n)).toBe(1);
}

test.each([
  ['shared by the replicas (Redis)', 'capped_shared'],
  ['of this replica', 'capped_local'],
])('a call waiting for a concurrency slot %s ends at once when the replica drains, and runs once on the retry', async (_name, name) => {
  const n = `wait-${name}`;
  const holder = call(name, `hold-${name}`);
  let held: Promise<DispatchResponse> | undefined;
  const { error, elapsed, ends, b } = await drainWhileWaiting(
    call(name, n),
    async (a) => {
      held = a.dispatch.dispatch(holder);
      await until(() => executions(`hold-${name}`) === 1 || undefined, 'the slot held');
    },
    () => true,
  );
  try {
    expectShuttingDownAtOnce(error, elapsed, ends);
    // The call holding the slot finished on the draining replica, within the grace period.
    expect((await held!).results[0]!.isError).toBe(false);
    expect(executions(n)).toBe(0);
    await expectRunOnceOn(b, call(name, n), n);
  } finally {
    await b.close();
  }
});

test('in a parallel wave, a call waiting for the slot its sibling holds ends at once; the turn ends SHUTTING_DOWN when the sibling has run, and the retry replays it and runs the other once', async () => {
  const calls = ['hold-wave', 'wait-wave'].map((n, i) => ({ id: `c${i + 1}`, name: 'capped_wave', arguments: JSON.stringify({ n }) }));
  const request: Request = { sessionId: 'wave', turn: 1, mode: DispatchMode.PARALLEL, calls };
  const { error, elapsed, ends, b } = await drainWhileWaiting(request, async () => undefined, () => executions('hold-wave') === 1);
  try {
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(errorReason(error)).toBe('SHUTTING_DOWN');
    // Once the sibling's tool has answered (HOLD_MS from its start), not at the grace period's end.
    expect(elapsed).toBeLessThan(GRACE_MS - 750);
    // c1 ran and finished (its result discarded with the turn's, replayed on the retry): its call ends ok.
    expect([...ends].sort()).toEqual(['c1 ok', 'c2 SHUTTING_DOWN', 'turn SHUTTING_DOWN']);
    expect([executions('hold-wave'), executions('wait-wave')]).toEqual([1, 0]);
    const { results } = await b.dispatch.dispatch(request);
    expect(results.map((r) => [r.toolCallId, r.isError, r.idempotentReplay])).toEqual([
      ['c1', false, true],
      ['c2', false, false],
    ]);
    expect([executions('hold-wave'), executions('wait-wave')]).toEqual([1, 1]);
  } finally {
    await b.close();
  }
});

test('a call waiting for its rate turn ends at once when the replica drains (its turn given back), and runs once on the retry', async () => {
  const n = 'wait-paced';
  const { error, elapsed, ends, b } = await drainWhileWaiting(
    call('paced', n),
    // The burst's one turn: the next is 2.5 s later.
    (a) => a.dispatch.dispatch(call('paced', 'first-paced')),
    () => true,
  );
  try {
    expectShuttingDownAtOnce(error, elapsed, ends);
    expect(executions('first-paced')).toBe(1);
    expect(executions(n)).toBe(0);
    await expectRunOnceOn(b, call('paced', n), n);
  } finally {
    await b.close();
  }
});

test('a call waiting for an approval ends at once when the replica drains; the approval is gone, and the retry asks again and runs once', async () => {
  const n = 'wait-asked';
  const { error, elapsed, ends, approvals, b } = await drainWhileWaiting(call('asked', n, true), async () => undefined, (a) => a.approvals.length === 1);
  try {
    expectShuttingDownAtOnce(error, elapsed, ends);
    // Deciding the abandoned approval later (through B's relay: no replica holds it) decides
    // nothing and runs nothing, as after its timeout.
    expect((await b.dispatch.resolveApproval({ approvalId: approvals[0]!, approve: true })).resolved).toBe(false);
    expect(executions(n)).toBe(0);
    await expectRunOnceOn(b, call('asked', n, true), n, async () => {
      await until(() => b.approvals.length === 1 || undefined, 'the approval asked again');
      expect(b.approvals[0]).not.toBe(approvals[0]);
      expect((await b.dispatch.resolveApproval({ approvalId: b.approvals[0]!, approve: true })).resolved).toBe(true);
    });
  } finally {
    await b.close();
  }
});
