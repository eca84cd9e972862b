import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { eventually } from './worker-harness';

// A worker author's probe: one oversized answer ends the worker's stream and fails every call it
// held, and each was told its own answer was too large ("calling again the same way will fail the
// same way. Ask for less"), a 41-character answer's call too. Which call's answer it was is not
// known (grpc-js refused it unread): with several held, each is told it was this call's or
// another's; a call held alone is told as before. Real gRPC worker streams.

const report = { name: 'w_report', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY };
const slow = { name: 'w_slow', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 5_000 };
const big = { output: 'r'.repeat(4.5 * 1024 * 1024) };

let t: WorkerApp;
beforeEach(async () => {
  t = await startWorkerApp();
});
afterEach(() => t.close());

const errorJson = (output: string) => JSON.parse(output) as { message: string; suggestion: string };

it('with another call held, each is told the answer was its own or the other\'s', async () => {
  const worker = await t.worker({ id: 'big', tools: [report, slow], answer: (a) => (a.call?.name === 'w_report' ? big : undefined) });
  const waiting = t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 's1', name: 'w_slow', arguments: '{}' }] });
  await eventually(() => worker.assignments.length === 1, 5_000, 'the slow assignment');
  const reported = (await t.dispatch.dispatch({ sessionId: 'r', calls: [{ id: 'r1', name: 'w_report', arguments: '{}' }] })).results[0]!;
  const innocent = (await waiting).results[0]!;
  for (const result of [reported, innocent]) {
    expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(errorJson(result.output).message).toContain("failing every call it held: the answer was this call's or another's, which is not known");
    expect(errorJson(result.output).suggestion).toBe(
      "The tool's worker sent an answer too large for dispatch to accept, for this call or another it was running at the same time, and every call it held was lost. Ask for less (a narrower request, fewer items) if this call asked for much; else call again; if the call changes anything, verify whether it took effect before calling again.",
    );
  }
});

it('held alone, the call is told its answer was too large', async () => {
  await t.worker({ id: 'big', tools: [report], answer: () => big });
  const reported = (await t.dispatch.dispatch({ sessionId: 'r', calls: [{ id: 'r1', name: 'w_report', arguments: '{}' }] })).results[0]!;
  expect(errorJson(reported.output).suggestion).toMatch(/^The tool's answer was too large for dispatch to accept from its worker, so it was lost; calling again the same way will fail the same way/);
});
