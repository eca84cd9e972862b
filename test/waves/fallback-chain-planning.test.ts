import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp, startToolServer, type ReceivedRequest, type TestDispatch, type ToolRoute, type ToolServer } from '../helpers/servers';

// Planning a parallel turn walks each call's fallback chain. A tenant may register (RegisterTools)
// a chain as long as max_tools_per_tenant (1000): planning a 128-call turn over it once took the
// replica's event loop for ~0.8 s (the whole chain walked again for every call), where the same
// turn in sequential mode took ~40 ms. A call makes at most MAX_RECOVERY_ATTEMPTS (5) attempts, so
// the planner follows at most 5 tools, once per tool name in a turn. Through the real app and gRPC.

const CHAIN = 1000;
const CALLS = 128;
let tools: ToolServer;
let d: TestDispatch;

/** Answers `status` after `ms`. */
const after = (ms: number, status: number): ToolRoute => (_req, res) =>
  new Promise<void>((resolve) => {
    setTimeout(() => {
      if (!res.destroyed) res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      resolve();
    }, ms).unref();
  });

beforeAll(async () => {
  tools = await startToolServer({ '/down': after(60, 503), '/slow': after(200, 200), '/unsafe': after(0, 200) });
  // d0 .. d4: safe and failing 5xx, each falling back to the next; d5 is not concurrency-safe.
  const chain = [0, 1, 2, 3, 4].map((i) => `  - { name: d${i}, effect: read_only, concurrency_safe: true, retry: { max_attempts: 1 }, fallback_tool: d${i + 1}, http: { url: "${tools.url}/down" } }\n`).join('');
  d = await startApp(`tools:\n${chain}  - { name: d5, effect: read_only, concurrency_safe: false, http: { url: "${tools.url}/unsafe" } }\n  - { name: slow, effect: read_only, concurrency_safe: true, http: { url: "${tools.url}/slow" } }\n`);
  await d.registry.registerTools({
    tools: Array.from({ length: CHAIN }, (_, i) => ({ name: `t${i}`, effect: Effect.READ_ONLY, concurrencySafe: true, resourceKey: '/p', fallbackTool: `t${(i + 1) % CHAIN}`, executor: { case: 'builtin' as const, value: { name: 'echo' } } })),
  });
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

/** A 128-call turn on the head of the chain: its wall time, and the longest the event loop was held meanwhile. */
async function bigTurn(mode: DispatchMode): Promise<{ ms: number; blockedMs: number }> {
  const calls = Array.from({ length: CALLS }, (_, i) => ({ id: `c${i}`, name: 't0', arguments: JSON.stringify({ p: `f${i}` }) }));
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  const { results } = await d.dispatch.dispatch({ sessionId: `chain-${Math.random()}`, mode, calls });
  const ms = performance.now() - started;
  delay.disable();
  expect(results.map((r) => [r.isError, r.resolvedToolName])).toEqual(calls.map(() => [false, 't0']));
  return { ms, blockedMs: delay.max / 1e6 };
}

test('a 128-call parallel turn over a chain of 1000 fallbacks is planned without holding the replica', async () => {
  const sequential = await bigTurn(DispatchMode.SEQUENTIAL);
  const parallel = [await bigTurn(DispatchMode.PARALLEL), await bigTurn(DispatchMode.PARALLEL)];
  const fastest = Math.min(...parallel.map((p) => p.ms));
  const blocked = Math.min(...parallel.map((p) => p.blockedMs));
  // Before: ~800 ms against ~40 ms sequential, the loop held ~770 ms. Generous for a loaded machine.
  expect(fastest).toBeLessThan(3 * sequential.ms + 300);
  expect(blocked).toBeLessThan(300);
});

test('a tool past MAX_RECOVERY_ATTEMPTS in the chain never runs, so it does not make the call run alone', async () => {
  tools.received.length = 0;
  const { results } = await d.dispatch.dispatch({
    sessionId: 'chain-depth',
    mode: DispatchMode.PARALLEL,
    calls: [
      { id: 'a', name: 'd0', arguments: '{"q":1}' },
      { id: 'b', name: 'slow', arguments: '{"q":2}' },
    ],
  });
  // Five attempts on d0 .. d4; the fallback to d5 is never run, and the call ends soft.
  expect(results.map((r) => [r.isError, r.resolvedToolName, r.attempts])).toEqual([
    [true, 'd4', 5],
    [false, 'slow', 1],
  ]);
  const sent = (path: string) => tools.received.filter((r: ReceivedRequest) => r.path === path);
  expect(sent('/unsafe')).toEqual([]);
  expect(sent('/down')).toHaveLength(5);
  // One wave: the sibling ran alongside the call's first attempt.
  const [first] = sent('/down');
  const [sibling] = sent('/slow');
  expect(first!.start < sibling!.end! && sibling!.start < first!.end!).toBe(true);
});
