import * as http2 from 'node:http2';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startPausedWorker } from './paused-worker';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { eventually } from './worker-harness';

// A worker that stops reading its stream (a long stall), ended by dispatch for it (its calls failed
// "does not read its assignments"): its stream must end then, not once the worker has read every
// assignment written before: a worker that resumes reading ran each of them, though their calls
// had failed, and dispatch held them meanwhile.
const MAX_UNSENT = 1024 * 1024;
const sink = { name: 'w_sink', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 20_000, retry: { maxAttempts: 1 } };
const big = (i: number) => JSON.stringify({ i, pad: 'z'.repeat(200 * 1024) });

let t: WorkerApp;
let worker: ReturnType<typeof startPausedWorker> | undefined;
beforeEach(async () => {
  t = await startWorkerApp({ maxUnsentBytes: MAX_UNSENT });
});
afterEach(async () => {
  worker?.close();
  await t.close();
});

test('a worker ended for not reading its assignments has its stream ended at once, and reads none of them when it resumes', async () => {
  worker = startPausedWorker(t.address, 'stalled', sink);
  await eventually(async () => (await t.registry.listTools({})).tools.some((x) => x.name === 'w_sink'), 5_000, 'the worker registered');
  const call = (i: number) => t.dispatch.dispatch({ sessionId: `s${i}`, calls: [{ id: `c${i}`, name: 'w_sink', arguments: big(i) }] }).then((r) => r.results[0]!);
  const calls = [];
  for (let i = 0; i < 50 && !(await Promise.race([calls.at(-1), new Promise((r) => setTimeout(r, 100))])); i++) calls.push(call(i));
  const results = await Promise.all(calls);
  const endedAt = Date.now();
  expect(results.filter((r) => /does not read its assignments/.test(r.error?.message ?? '')).length).toBeGreaterThanOrEqual(6);
  await new Promise((r) => setTimeout(r, 1_000));
  const received = worker.resume();
  await new Promise((r) => setTimeout(r, 1_000));
  expect({ closedWithinASecond: (worker.closedAt() ?? Infinity) - endedAt < 1_000, assignmentsReadAfterwards: received }).toEqual({ closedWithinASecond: true, assignmentsReadAfterwards: [] });
  // Reset (ENHANCE_YOUR_CALM: RESOURCE_EXHAUSTED to a gRPC library), so no trailer: no ErrorInfo reaches the worker.
  expect(worker.ending()).toEqual({ rstCode: http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, trailers: undefined });
}, 30_000);
