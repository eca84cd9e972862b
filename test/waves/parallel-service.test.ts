import { fromBinary } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { status, type ServiceError } from '@grpc/grpc-js';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { ErrorInfoSchema } from '../../gen/google/rpc/error_details_pb';
import { StatusSchema } from '../../gen/google/rpc/status_pb';
import { closedPort, maxInFlight, startApp, startToolServer, type ReceivedRequest, type TestDispatch, type ToolServer } from '../helpers/servers';
import { answerAfter } from './answer-after';

// Parallel mode through the real gRPC service and the whole app, against real HTTP tools that
// record when each request started and ended.

const slow = (ms: number) => answerAfter(ms, closedEarly);

/** A lenient tool's schema: a model that sends `"7"` for 7 is repaired. */
const ROW_SCHEMA = JSON.stringify({ type: 'object', properties: { id: { type: 'integer' }, n: { type: 'integer' } }, required: ['id'] });
/** A schema whose key has a default: an omitted region is the default one. */
const REGION_SCHEMA = JSON.stringify({ type: 'object', properties: { region: { type: 'string', default: 'eu' }, n: { type: 'integer' } } });

const closedEarly: string[] = [];
let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({ '/300': slow(300), '/150': slow(150), '/100': slow(100), '/2000': slow(2000) });
  const tool = (name: string, path: string, extra: string) => `  - { name: ${name}, effect: read_only, http: { url: "${tools.url}${path}" }, ${extra} }\n`;
  d = await startApp(
    'tools:\n' +
      tool('read_file', '/300', 'concurrency_safe: true, resource_key: /path') +
      tool('read_150', '/150', 'concurrency_safe: true, resource_key: /path') +
      tool('write_150', '/150', 'concurrency_safe: false, resource_key: /path') +
      tool('fetch_100', '/100', 'concurrency_safe: true') +
      tool('hang', '/2000', 'concurrency_safe: true') +
      tool('loopy', '/100', 'concurrency_safe: true, loop: { stop_threshold: 1 }') +
      tool('read_row', '/150', `concurrency_safe: true, resource_key: /id, lenient_arguments: true, input_schema: '${ROW_SCHEMA}'`) +
      tool('read_region', '/150', `concurrency_safe: true, resource_key: /region, input_schema: '${REGION_SCHEMA}'`) +
      // Safe, but unreachable: it falls back to an unsafe tool.
      `  - { name: primary, effect: read_only, concurrency_safe: true, retry: { max_attempts: 1 }, fallback_tool: write_150, http: { url: "http://127.0.0.1:${await closedPort()}/x" } }\n` +
      // A policy that moves a call onto another resource after the turn was planned.
      'policies:\n  - { match: read_150, when: [{ pointer: /alias, op: exists }], decide: modify, set: { /path: shared }, remove: [/alias] }\n',
  );
  // Warm the channel and the HTTP client, so timings measure the waves.
  await d.dispatch.dispatch({ sessionId: 'warmup', mode: DispatchMode.PARALLEL, calls: [0, 1, 2, 3, 4, 5, 6, 7].map((q) => ({ id: `w${q}`, name: 'fetch_100', arguments: `{"q":${q}}` })) });
});
afterAll(async () => {
  await d.close();
  await tools.close();
});
beforeEach(() => {
  tools.received.length = 0;
  closedEarly.length = 0;
});

let sessions = 0;
const parallel = (calls: { name: string; args: object }[], maxConcurrency = 0, signal?: AbortSignal) =>
  d.dispatch.dispatch(
    { sessionId: `waves-${sessions++}`, mode: DispatchMode.PARALLEL, maxConcurrency, calls: calls.map((c, i) => ({ id: `call-${i}`, name: c.name, arguments: JSON.stringify(c.args) })) },
    { signal },
  );

const byId = (id: string): ReceivedRequest => tools.received.find((r) => r.body.tool_call_id === id)!;
const overlap = (a: ReceivedRequest, b: ReceivedRequest) => a.start < b.end! && b.start < a.end!;
function errorInfoReason(error: ServiceError): string | undefined {
  const bin = error.metadata?.get('grpc-status-details-bin')[0];
  if (!bin) return undefined;
  const details = fromBinary(StatusSchema, bin as Buffer).details.map((a) => anyUnpack(a, ErrorInfoSchema));
  return details.find((x) => x !== undefined)?.reason;
}

test('eight safe 300 ms calls run together: all in flight at once, results in request order', async () => {
  const started = Date.now();
  const { results } = await parallel(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((path) => ({ name: 'read_file', args: { path } })));
  const elapsed = Date.now() - started;
  expect(results.every((r) => !r.cached)).toBe(true);
  // One wave: all eight reached the tool server before the first one answered. On a quiet machine
  // the turn takes ~330-460 ms. The wall-clock bound only has to beat sequential calls (2,400 ms
  // of tool time): on a loaded 2-core test machine even the tool server's 300 ms timers fire
  // late, and turns of over 1.2 s were seen there.
  const firstEnd = Math.min(...tools.received.map((r) => r.end!));
  expect(tools.received.every((r) => r.start < firstEnd)).toBe(true);
  // As the tool server saw them, the eight calls took one call's time (~300 ms), well under the
  // 600 ms of two waves of four.
  const toolSpan = Math.max(...tools.received.map((r) => r.end!)) - Math.min(...tools.received.map((r) => r.start));
  expect(toolSpan).toBeLessThan(600);
  expect(elapsed).toBeLessThan(2000);
  expect(results.map((r) => [r.toolCallId, r.output])).toEqual(results.map((_, i) => [`call-${i}`, `{"id":"call-${i}"}`]));
  expect(maxInFlight(tools.received)).toBe(8);
});

test('calls on the same resource key never overlap, and keep their request order', async () => {
  const paths = ['a', 'b', 'a', 'c', 'a', 'b'];
  // Arguments differ beyond the key, so no call is a memoized replay of another.
  const { results } = await parallel(paths.map((path, n) => ({ name: 'read_150', args: { path, n } })));
  expect(results.map((r) => r.toolCallId)).toEqual(paths.map((_, i) => `call-${i}`));
  expect(results.every((r) => !r.isError)).toBe(true);
  for (let i = 0; i < paths.length; i++) {
    for (let j = i + 1; j < paths.length; j++) {
      if (paths[i] !== paths[j]) continue;
      expect(overlap(byId(`call-${i}`), byId(`call-${j}`))).toBe(false);
      expect(byId(`call-${i}`).end!).toBeLessThanOrEqual(byId(`call-${j}`).start);
    }
  }
  // Different keys still ran together.
  expect(overlap(byId('call-0'), byId('call-1'))).toBe(true);
});

test('the resource key is read from the arguments the tool receives: repaired values and defaults name one resource', async () => {
  // "7" is repaired to 7 for the lenient tool, and an omitted region takes its default "eu": as
  // the model emitted them the keys differ, as the tools receive them they are the same.
  const { results } = await parallel([
    { name: 'read_row', args: { id: 7, n: 0 } },
    { name: 'read_row', args: { id: '7', n: 1 } },
    { name: 'read_region', args: { region: 'eu', n: 2 } },
    { name: 'read_region', args: { n: 3 } },
    { name: 'read_row', args: { id: 8, n: 4 } },
  ]);
  expect(results.every((r) => !r.isError)).toBe(true);
  expect(byId('call-0').body.arguments).toEqual({ id: 7, n: 0 });
  expect(byId('call-1').body.arguments).toEqual({ id: 7, n: 1 });
  expect(overlap(byId('call-0'), byId('call-1'))).toBe(false);
  expect(overlap(byId('call-2'), byId('call-3'))).toBe(false);
  expect(byId('call-0').end!).toBeLessThanOrEqual(byId('call-1').start);
  expect(byId('call-2').end!).toBeLessThanOrEqual(byId('call-3').start);
  // Other keys still ran together.
  expect(overlap(byId('call-0'), byId('call-4'))).toBe(true);
});

test('a call that a policy rewrites onto another call\'s resource waits for it, though the plan put both in one wave', async () => {
  // As the model sent them the keys differ (one wave); the policy turns call-1's path into
  // "shared", call-0's resource. call-2 is on a third key and runs beside call-0.
  const { results } = await parallel([
    { name: 'read_150', args: { path: 'shared', n: 0 } },
    { name: 'read_150', args: { path: 'elsewhere', alias: true, n: 1 } },
    { name: 'read_150', args: { path: 'other', n: 2 } },
  ]);
  expect(results.every((r) => !r.isError)).toBe(true);
  expect(byId('call-1').body.arguments).toEqual({ path: 'shared', n: 1 });
  expect(overlap(byId('call-0'), byId('call-1'))).toBe(false);
  expect(byId('call-0').end!).toBeLessThanOrEqual(byId('call-1').start);
  expect(overlap(byId('call-0'), byId('call-2'))).toBe(true);
});

test('an unsafe call runs alone: what came before it has ended, what comes after has not started', async () => {
  const calls = [
    { name: 'read_150', args: { path: 'a' } },
    { name: 'fetch_100', args: { q: 1 } },
    { name: 'write_150', args: { path: 'z' } },
    { name: 'read_150', args: { path: 'b' } },
    { name: 'fetch_100', args: { q: 2 } },
  ];
  const { results } = await parallel(calls);
  expect(results.map((r) => r.toolCallId)).toEqual(calls.map((_, i) => `call-${i}`));
  const unsafe = byId('call-2');
  for (const id of ['call-0', 'call-1', 'call-3', 'call-4']) expect(overlap(unsafe, byId(id))).toBe(false);
  expect(byId('call-0').end!).toBeLessThanOrEqual(unsafe.start);
  expect(byId('call-3').start).toBeGreaterThanOrEqual(unsafe.end!);
  expect(overlap(byId('call-0'), byId('call-1'))).toBe(true);
  expect(overlap(byId('call-3'), byId('call-4'))).toBe(true);
});

test('a safe call that may fall back to an unsafe tool runs alone too', async () => {
  const { results } = await parallel([
    { name: 'fetch_100', args: { q: 1 } },
    { name: 'primary', args: { path: 'p' } },
    { name: 'fetch_100', args: { q: 2 } },
  ]);
  expect(results[1]!.resolvedToolName).toBe('write_150');
  const fallback = byId('call-1');
  for (const id of ['call-0', 'call-2']) expect(overlap(fallback, byId(id))).toBe(false);
});

test('with max_concurrency 2 the tool server never sees three calls in flight', async () => {
  const { results } = await parallel(Array.from({ length: 6 }, (_, q) => ({ name: 'fetch_100', args: { q } })), 2);
  expect(results.map((r) => r.output)).toEqual(results.map((_, i) => `{"id":"call-${i}"}`));
  expect(tools.received).toHaveLength(6);
  expect(maxInFlight(tools.received)).toBe(2);
});

test('max_concurrency 0 means 8: ten safe calls, eight in flight at most', async () => {
  const { results } = await parallel(Array.from({ length: 10 }, (_, q) => ({ name: 'fetch_100', args: { q } })));
  expect(results.map((r) => r.toolCallId)).toEqual(results.map((_, i) => `call-${i}`));
  expect(maxInFlight(tools.received)).toBe(8);
});

test('a hard error in a wave aborts its running siblings, whose connections close, and the RPC ends ABORTED', async () => {
  // The first loopy call in this session records its result; the second identical one stops at
  // the loop pre-check (stop_threshold 1). With max_concurrency 3 it starts once `fetch_100`
  // finished, while the two `hang` calls are in flight at the tool server.
  const session = `waves-loop-${sessions++}`;
  await d.dispatch.dispatch({ sessionId: session, calls: [{ id: 'first', name: 'loopy', arguments: '{"q":1}' }] });
  tools.received.length = 0;
  const started = Date.now();
  const error = (await d.dispatch
    .dispatch({
      sessionId: session,
      mode: DispatchMode.PARALLEL,
      maxConcurrency: 3,
      calls: [
        { id: 'hang-1', name: 'hang', arguments: '{"n":1}' },
        { id: 'hang-2', name: 'hang', arguments: '{"n":2}' },
        { id: 'quick', name: 'fetch_100', arguments: '{}' },
        { id: 'again', name: 'loopy', arguments: '{"q":1}' },
        { id: 'later', name: 'write_150', arguments: '{"path":"x"}' },
      ],
    })
    .then(
      () => undefined,
      (e: ServiceError) => e,
    ))!;
  expect(error).toBeDefined();
  expect(error.code).toBe(status.ABORTED);
  expect(errorInfoReason(error)).toBe('LOOP_DETECTED');
  expect(Date.now() - started).toBeLessThan(1500);
  await waitFor(() => closedEarly.length === 2);
  expect(closedEarly.sort()).toEqual(['hang-1', 'hang-2']);
  // The loop stop came before execution, and the next wave never started.
  expect(tools.received.map((r) => r.body.tool_call_id).sort()).toEqual(['hang-1', 'hang-2', 'quick']);
});

test('a client cancel aborts the running wave and no later wave starts; the RPC ends CANCELLED', async () => {
  const controller = new AbortController();
  const pending = parallel(
    [
      { name: 'hang', args: { n: 1 } },
      { name: 'hang', args: { n: 2 } },
      { name: 'write_150', args: { path: 'x' } },
    ],
    0,
    controller.signal,
  ).then(
    () => undefined,
    (e: ServiceError) => e,
  );
  await waitFor(() => tools.received.length === 2);
  controller.abort();
  const error = await pending;
  expect(error?.code).toBe(status.CANCELLED);
  await waitFor(() => closedEarly.length === 2);
  await new Promise((r) => setTimeout(r, 100));
  expect(tools.received.map((r) => r.body.tool_call_id)).toEqual(['call-0', 'call-1']);
});

test('when the RPC deadline passes mid-wave, the running calls are aborted at the tool server', async () => {
  const error = await d.dispatch
    .dispatch(
      { sessionId: `waves-${sessions++}`, mode: DispatchMode.PARALLEL, calls: [1, 2].map((n) => ({ id: `late-${n}`, name: 'hang', arguments: `{"n":${n}}` })) },
      { deadlineMs: 300 },
    )
    .then(
      () => undefined,
      (e: ServiceError) => e,
    );
  expect(error?.code).toBe(status.DEADLINE_EXCEEDED);
  // The hang route answers after 2 s; the server closed both requests long before.
  await waitFor(() => closedEarly.length === 2, 1500);
  expect(closedEarly.sort()).toEqual(['late-1', 'late-2']);
});

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
