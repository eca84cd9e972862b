import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { closedPort, startApp, startToolServer, type ReceivedRequest, type TestDispatch, type ToolRoute, type ToolServer } from '../helpers/servers';

// Parallel mode plans a call for every tool it may end on: its fallback, and the fallback's
// fallback. Through the real gRPC service and the whole app, against real HTTP tools that record
// when each request started and ended.

/** Answers `{"id": tool_call_id}` after `ms`. */
const slow = (ms: number): ToolRoute => (req, res) =>
  new Promise<void>((resolve) => {
    setTimeout(() => {
      if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: req.body.tool_call_id }));
      resolve();
    }, ms).unref();
  });

let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({ '/fetch': slow(150), '/write': slow(150), '/read': slow(150) });
  const down = `http://127.0.0.1:${await closedPort()}`;
  d = await startApp(`
tools:
  - { name: fetch, effect: read_only, concurrency_safe: true, http: { url: "${tools.url}/fetch" } }
  - { name: write, effect: read_only, concurrency_safe: false, http: { url: "${tools.url}/write" } }
  - { name: read, effect: read_only, concurrency_safe: true, resource_key: /path, http: { url: "${tools.url}/read" } }
  # Safe and unreachable, falling back to a safe tool that falls back to an unsafe one.
  - { name: first, effect: read_only, concurrency_safe: true, retry: { max_attempts: 1 }, fallback_tool: second, http: { url: "${down}/first" } }
  - { name: second, effect: read_only, concurrency_safe: true, retry: { max_attempts: 1 }, fallback_tool: write, http: { url: "${down}/second" } }
  # Safe, no resource key, unreachable, falling back to a tool with one.
  - { name: keyless, effect: read_only, concurrency_safe: true, retry: { max_attempts: 1 }, fallback_tool: read, http: { url: "${down}/keyless" } }
  # A cycle of safe tools: planning it ends.
  - { name: ping, effect: read_only, concurrency_safe: true, retry: { max_attempts: 1 }, fallback_tool: pong, http: { url: "${down}/ping" } }
  - { name: pong, effect: read_only, concurrency_safe: true, retry: { max_attempts: 1 }, fallback_tool: ping, http: { url: "${down}/pong" } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});
beforeEach(() => {
  tools.received.length = 0;
});

let sessions = 0;
const parallel = (calls: { name: string; args: object }[], offeredTools: string[] = []) =>
  d.dispatch.dispatch({ sessionId: `fallback-waves-${sessions++}`, mode: DispatchMode.PARALLEL, offeredTools, calls: calls.map((c, i) => ({ id: `call-${i}`, name: c.name, arguments: JSON.stringify(c.args) })) });

const byId = (id: string): ReceivedRequest => tools.received.find((r) => r.body.tool_call_id === id)!;
const overlap = (a: ReceivedRequest, b: ReceivedRequest) => a.start < b.end! && b.start < a.end!;

test('a safe call whose fallback falls back to an unsafe tool runs alone', async () => {
  const { results } = await parallel([
    { name: 'fetch', args: { q: 1 } },
    { name: 'first', args: { q: 2 } },
    { name: 'fetch', args: { q: 3 } },
  ]);
  expect(results.map((r) => [r.isError, r.resolvedToolName, r.output])).toEqual([
    [false, 'fetch', '{"id":"call-0"}'],
    [false, 'write', '{"id":"call-1"}'],
    [false, 'fetch', '{"id":"call-2"}'],
  ]);
  expect(results[1]!.warnings).toEqual(['fell back from "first" to "second": "first" failed with UNAVAILABLE', 'fell back from "second" to "write": "second" failed with UNAVAILABLE']);
  const unsafe = byId('call-1');
  expect(overlap(unsafe, byId('call-0'))).toBe(false);
  expect(overlap(unsafe, byId('call-2'))).toBe(false);
  expect(byId('call-0').end!).toBeLessThanOrEqual(unsafe.start);
  expect(byId('call-2').start).toBeGreaterThanOrEqual(unsafe.end!);
});

test('a call that may fall back onto a resource runs before a later call on that resource, not alongside it', async () => {
  const { results } = await parallel([
    { name: 'keyless', args: { path: 'p', n: 1 } },
    { name: 'read', args: { path: 'p', n: 2 } },
    { name: 'fetch', args: { q: 1 } },
  ]);
  expect(results.map((r) => [r.isError, r.resolvedToolName, r.output])).toEqual([
    [false, 'read', '{"id":"call-0"}'],
    [false, 'read', '{"id":"call-1"}'],
    [false, 'fetch', '{"id":"call-2"}'],
  ]);
  expect(results[0]!.warnings).toEqual(['fell back from "keyless" to "read": "keyless" failed with UNAVAILABLE']);
  expect(byId('call-0').end!).toBeLessThanOrEqual(byId('call-1').start);
  // The fallback's key takes nothing else out of the wave.
  expect(overlap(byId('call-0'), byId('call-2'))).toBe(true);
});

test('a fallback that was not offered is not planned for: the safe call keeps its place in the wave', async () => {
  const { results } = await parallel(
    [
      { name: 'fetch', args: { q: 1 } },
      { name: 'second', args: { q: 2 } },
      { name: 'fetch', args: { q: 3 } },
    ],
    ['fetch', 'second'],
  );
  expect(results.map((r) => [r.isError, r.resolvedToolName])).toEqual([
    [false, 'fetch'],
    [true, 'second'],
    [false, 'fetch'],
  ]);
  expect(results[1]!.warnings).toEqual(['no fallback ran: the fallback_tool of "second" was not offered to you in this turn']);
  expect(tools.count('/write')).toBe(0);
  expect(overlap(byId('call-0'), byId('call-2'))).toBe(true);
});

test('a cycle of fallbacks is planned once round and ends as a soft error, its siblings kept', async () => {
  const { results } = await parallel([
    { name: 'fetch', args: { q: 1 } },
    { name: 'ping', args: {} },
  ]);
  expect(results.map((r) => [r.isError, r.resolvedToolName, r.attempts])).toEqual([
    [false, 'fetch', 1],
    [true, 'pong', 2],
  ]);
  expect(JSON.parse(results[1]!.output)).toMatchObject({ tool: 'pong', kind: 'UNAVAILABLE', attempts: 2 });
});
