import { status, type ServiceError } from '@grpc/grpc-js';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { DispatchMode, type DispatchRequestSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { createMemoryStore, type Store } from '../../src/store';
import { errorReason } from '../guards/helpers';
import { endings } from '../helpers/endings';
import { until } from '../helpers/until';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { callOutcomes, tapEvents, turnEnded } from '../events/event-tap';

// A draining replica starts no new attempt: not a sequential turn's next call, not a parallel
// turn's next wave or next call of a wave, not a retry (whose backoff draining ends). The
// attempts running finish; the turn then ends UNAVAILABLE SHUTTING_DOWN at once, not at the grace
// period's end, and the client's retry on another replica replays the calls that ran and runs the
// rest once. Before, the next call started within the grace period and was cut off at its end: the
// retry elsewhere found its side effect half done (OUTCOME_UNKNOWN).

jest.setTimeout(20_000);

const TOOL_MS = 300;
const GRACE_MS = 1500;

let tools: ToolServer;
/** Sends answered in full (not cut off by dispatchd). */
let completed = 0;
beforeAll(async () => {
  tools = await startToolServer({
    '/send': async (_req, res) => {
      await new Promise((r) => setTimeout(r, TOOL_MS).unref());
      if (res.destroyed) return;
      completed++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"sent":true}');
    },
    '/busy': (_req, res) => void res.writeHead(503).end('busy'),
  });
});
afterAll(() => tools.close());

const yaml = () => `
tools:
  - name: send
    effect: side_effect
    timeout_ms: 5000
    idempotency: { key_fields: ["/n"], ttl_seconds: 600 }
    input_schema: '{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}'
    http: { url: "${tools.url}/send" }
  - name: send_safe
    effect: side_effect
    concurrency_safe: true
    timeout_ms: 5000
    idempotency: { key_fields: ["/n"], ttl_seconds: 600 }
    input_schema: '{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}'
    http: { url: "${tools.url}/send" }
  - name: busy
    effect: read_only
    concurrency_safe: true
    retry: { max_attempts: 5, initial_backoff_ms: 2000, max_backoff_ms: 2000 }
    http: { url: "${tools.url}/busy" }
`;


/** The `n` of each request the tool server received at `path`, in order. */
const sent = (path: string, since: number) => tools.received.slice(since).filter((r) => r.path === path).map((r) => (r.body.arguments as { n: string }).n);

type Request = MessageInitShape<typeof DispatchRequestSchema>;

/**
 * Runs `request` on a replica, drains it (grace GRACE_MS) once `ready` holds, and returns the
 * RPC's error, how long after the drain began it came, and the replica's events; a second replica
 * sharing the store then takes the same request (`retried`), unless `retry` is false.
 */
async function drainAndRetry(request: Request, ready: () => boolean, retry = true) {
  const shared = createMemoryStore();
  // Both replicas use one store, shared as Redis is (a draining replica then ends its turns early);
  // the first one's close must not clear it.
  const store: Store = { ...shared, shared: true, close: async () => undefined };
  const first = endings();
  const a = await startApp(yaml(), { pipeline: { store, observer: first.observer } });
  const b = await startApp(yaml(), { pipeline: { store } });
  let closing: Promise<void> | undefined;
  try {
    const pending = a.dispatch.dispatch(request).then(() => undefined, (error: ServiceError) => error);
    await until(() => ready() || undefined, 'the drain point');
    const drained = Date.now();
    closing = a.app.close(GRACE_MS);
    const error = await pending;
    const elapsed = Date.now() - drained;
    await closing;
    const retried = retry ? await b.dispatch.dispatch(request) : undefined;
    return { error, elapsed, ends: first.ends, retried };
  } finally {
    if (closing) {
      a.dispatch.close();
      a.registry.close();
    } else await a.close();
    await b.close();
    await shared.close();
  }
}

function expectShuttingDown(error: ServiceError | undefined, elapsed: number): void {
  expect(error?.code).toBe(status.UNAVAILABLE);
  expect(errorReason(error)).toBe('SHUTTING_DOWN');
  // At the running call's end (TOOL_MS at most), not the grace period's.
  expect(elapsed).toBeLessThan(GRACE_MS - 300);
}

const sends = (tool: string, session: string) => ['1', '2', '3', '4'].map((n) => ({ id: `c${n}`, name: tool, arguments: JSON.stringify({ n: `${session}-${n}` }) }));

test('a sequential turn on a draining replica finishes its running call, starts no other, and is retried elsewhere', async () => {
  const since = tools.received.length;
  const { error, elapsed, ends, retried } = await drainAndRetry({ sessionId: 'seq', turn: 1, mode: DispatchMode.SEQUENTIAL, calls: sends('send', 'seq') }, () => sent('/send', since).length === 2);
  expectShuttingDown(error, elapsed);
  // Calls never reached have no events, as after a cancellation.
  expect(ends).toEqual(['c1 ok', 'c2 ok', 'turn SHUTTING_DOWN']);
  expect(retried?.results.map((r) => [r.toolCallId, r.isError, r.idempotentReplay])).toEqual([
    ['c1', false, true],
    ['c2', false, true],
    ['c3', false, false],
    ['c4', false, false],
  ]);
  expect(sent('/send', since)).toEqual(['seq-1', 'seq-2', 'seq-3', 'seq-4']);
});

test.each([
  ['one wave per call (not concurrency-safe)', 'send', 0],
  ['one wave run one call at a time (max_concurrency 1)', 'send_safe', 1],
])('a parallel turn on a draining replica starts no next call: %s', async (_name, tool, maxConcurrency) => {
  const since = tools.received.length;
  const session = `par-${tool}`;
  const request: Request = { sessionId: session, turn: 1, mode: DispatchMode.PARALLEL, maxConcurrency, calls: sends(tool, session) };
  const { error, elapsed, ends, retried } = await drainAndRetry(request, () => sent('/send', since).length === 2);
  expectShuttingDown(error, elapsed);
  // A parallel turn's calls all had CALL_RECEIVED: each ends, as after a cancellation; the two
  // that ran end ok (their results go with the turn's), the two never started SHUTTING_DOWN.
  expect(ends.slice(0, 4).sort()).toEqual(['c1 ok', 'c2 ok', 'c3 SHUTTING_DOWN', 'c4 SHUTTING_DOWN']);
  expect(ends[4]).toBe('turn SHUTTING_DOWN');
  expect(retried?.results.map((r) => [r.toolCallId, r.isError, r.idempotentReplay])).toEqual([
    ['c1', false, true],
    ['c2', false, true],
    ['c3', false, false],
    ['c4', false, false],
  ]);
  expect(sent('/send', since)).toEqual([`${session}-1`, `${session}-2`, `${session}-3`, `${session}-4`]);
});

test('a retry waiting out its backoff on a draining replica is not made: the wait ends at once', async () => {
  const since = tools.received.length;
  const request: Request = { sessionId: 'busy', turn: 1, calls: [{ id: 'b1', name: 'busy', arguments: '{}' }] };
  const busy = () => tools.received.slice(since).filter((r) => r.path === '/busy').length;
  const { error, elapsed, ends } = await drainAndRetry(request, () => busy() === 1, false);
  expectShuttingDown(error, elapsed);
  expect(ends).toEqual(['b1 SHUTTING_DOWN', 'turn SHUTTING_DOWN']);
  expect(busy()).toBe(1);
});

test('in a parallel wave, a retry refused by draining cuts no running call short', async () => {
  const since = tools.received.length;
  const before = completed;
  const busy = () => tools.received.slice(since).filter((r) => r.path === '/busy').length;
  const calls = [
    { id: 'b1', name: 'busy', arguments: '{}' },
    { id: 's1', name: 'send_safe', arguments: '{"n":"mixed-1"}' },
  ];
  const request: Request = { sessionId: 'mixed', turn: 1, mode: DispatchMode.PARALLEL, calls };
  const { error, elapsed, ends } = await drainAndRetry(request, () => busy() === 1 && sent('/send', since).length === 1, false);
  expectShuttingDown(error, elapsed);
  expect(busy()).toBe(1);
  expect(completed - before).toBe(1);
  // s1 finished: its call ends ok though the turn's answer discards its result.
  expect(ends.sort()).toEqual(['b1 SHUTTING_DOWN', 's1 ok', 'turn SHUTTING_DOWN']);
});

test("with a store of its own (memory, not shared), a draining replica finishes the turn within its grace: a retry elsewhere would find no record and run again what had run", async () => {
  const since = tools.received.length;
  const a = await startApp(yaml());
  const request: Request = { sessionId: 'own', turn: 1, mode: DispatchMode.SEQUENTIAL, calls: sends('send', 'own').slice(0, 2) };
  const pending = a.dispatch.dispatch(request);
  await until(() => sent('/send', since).length === 1 || undefined, 'the first call');
  const closing = a.app.close(5_000);
  try {
    const { results } = await pending;
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ['c1', false],
      ['c2', false],
    ]);
    expect(sent('/send', since)).toEqual(['own-1', 'own-2']);
  } finally {
    await closing;
    a.dispatch.close();
    a.registry.close();
  }
});

test('with a store of its own, the turns a draining replica finishes keep their subscribers and workers until they end', async () => {
  const since = tools.received.length;
  const a = await startApp(yaml());
  const tap = await tapEvents(a.address);
  const request: Request = { sessionId: 'hosting', turn: 1, mode: DispatchMode.SEQUENTIAL, calls: sends('send', 'hosting').slice(0, 3) };
  const pending = a.dispatch.dispatch(request);
  await until(() => sent('/send', since).length === 1 || undefined, 'the first call');
  const closing = a.app.close(5_000);
  try {
    const { results } = await pending;
    expect(results.every((r) => !r.isError)).toBe(true);
    // The subscriber saw the whole turn: its stream ended once the turn had, not when the drain began.
    await tap.waitFor(turnEnded('hosting'));
    expect(callOutcomes(tap.events, 'hosting')).toEqual({ posts: [['c1', 'ok', undefined], ['c2', 'ok', undefined], ['c3', 'ok', undefined]], turn: 'ok' });
  } finally {
    tap.close();
    await closing;
    a.dispatch.close();
    a.registry.close();
  }
});
