import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Combinations: a parallel turn of read-only calls to a tool answering 503, retried, whose
// breaker opens mid-turn, falling back to another tool; a memoized truncated result read through
// its handle from another session; a parallel turn whose call waits in a retry backoff near the
// client's deadline.

jest.setTimeout(20_000);

let tools: ToolServer;
let d: TestDispatch;
const long = 'y'.repeat(300) + 'END';

beforeAll(async () => {
  tools = await startToolServer({
    '/flaky': (_req, res) => void res.writeHead(503).end('down'),
    '/backup': (req, res) => void res.writeHead(200).end(`backup ${JSON.stringify(req.body.arguments)}`),
    '/big': (_req, res) => void res.writeHead(200).end(long),
    '/later': (_req, res) => void res.writeHead(503, { 'retry-after': '1' }).end('later'),
    '/quick': (_req, res) => void res.writeHead(200).end('quick'),
  });
  d = await startApp(`
tools:
  - { name: flaky, effect: read_only, concurrency_safe: true, memoize_ttl_seconds: 0, retry: { max_attempts: 2, initial_backoff_ms: 10, jitter: 0 }, fallback_tool: backup, http: { url: "${tools.url}/flaky" } }
  - { name: backup, effect: read_only, concurrency_safe: true, skip_memoize: true, http: { url: "${tools.url}/backup" } }
  - { name: big, effect: read_only, concurrency_safe: true, max_result_chars: 100, http: { url: "${tools.url}/big" } }
  - { name: later, effect: read_only, concurrency_safe: true, retry: { max_attempts: 3 }, http: { url: "${tools.url}/later" } }
  - { name: quick, effect: read_only, concurrency_safe: true, http: { url: "${tools.url}/quick" } }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

test('a parallel turn whose tool fails 503, retried, opens its breaker mid-turn: every call falls back, in request order', async () => {
  const calls = Array.from({ length: 6 }, (_, i) => ({ id: `f${i}`, name: 'flaky', arguments: JSON.stringify({ q: i }) }));
  const { results } = await d.dispatch.dispatch({ sessionId: 'breaker-waves', mode: DispatchMode.PARALLEL, calls }, { deadlineMs: 10_000 });
  expect(results.map((r) => r.toolCallId)).toEqual(calls.map((c) => c.id));
  for (const [i, r] of results.entries()) {
    expect([r.toolCallId, r.isError ? ErrorKind[r.error!.kind] : r.output]).toEqual([`f${i}`, `backup {"q":${i}}`]);
    expect(r.resolvedToolName).toBe('backup');
  }
  // 5 failures open it (consecutive): no more than 6 x 2 attempts reach the failing tool.
  expect(tools.count('/flaky')).toBeLessThanOrEqual(12);
  // Now open: the next call does not reach it and still falls back.
  const before = tools.count('/flaky');
  const next = (await d.dispatch.dispatch({ sessionId: 'breaker-waves-2', calls: [{ id: 'n', name: 'flaky', arguments: '{"q":99}' }] })).results[0]!;
  expect(next.output).toBe('backup {"q":99}');
  expect(tools.count('/flaky')).toBe(before);
});

test('a memoized truncated result: the cached answer has its own readable handle, whichever session ended', async () => {
  const a = (await d.dispatch.dispatch({ sessionId: 'memo-a', calls: [{ id: 'b1', name: 'big', arguments: '{}' }] })).results[0]!;
  const b = (await d.dispatch.dispatch({ sessionId: 'memo-b', calls: [{ id: 'b2', name: 'big', arguments: '{}' }] })).results[0]!;
  expect(a.truncated && b.truncated).toBe(true);
  expect(b.output).toBe(a.output);
  await d.dispatch.endSession({ sessionId: 'memo-a' });
  const page = await d.dispatch.readResult({ resultHandle: b.resultHandle, offset: 0, limit: 1000 });
  expect(page.text).toBe(long);
  expect(page.totalChars).toBe(long.length);
});

test('a parallel turn with a call retrying after Retry-After near the client deadline ends soft, on time, other results kept', async () => {
  const started = Date.now();
  const { results } = await d.dispatch.dispatch(
    { sessionId: 'backoff-deadline', mode: DispatchMode.PARALLEL, calls: [{ id: 'l', name: 'later', arguments: '{}' }, { id: 'q', name: 'quick', arguments: '{}' }] },
    { deadlineMs: 1_500 },
  );
  expect(Date.now() - started).toBeLessThan(1_500);
  expect(results.map((r) => r.toolCallId)).toEqual(['l', 'q']);
  expect(results[1]!.output).toBe('quick');
  expect(results[0]!.isError).toBe(true);
  expect(ErrorKind[results[0]!.error!.kind]).toBe('TOOL_ERROR');
});
