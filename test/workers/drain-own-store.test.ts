import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp } from './worker-app';
import { eventually } from './worker-harness';

// With a store of its own (memory), a draining replica finishes its turns within the grace period
// (a retry elsewhere would run again what had run), so their workers stay until those turns end:
// the worker pool drained at the drain's start, and the turn's next worker call found "no worker".

const tool = { name: 'w_slow', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY };

test("a turn a draining replica finishes still reaches its tools' worker", async () => {
  const t = await startWorkerApp();
  try {
    const worker = await t.worker({ id: 'w', tools: [tool] });
    const calls = [1, 2].map((n) => ({ id: `c${n}`, name: 'w_slow', arguments: `{"n":${n}}` }));
    const pending = t.dispatch.dispatch({ sessionId: 's', mode: DispatchMode.SEQUENTIAL, calls });
    await eventually(() => worker.assignments.length === 1, 5_000, 'the first assignment');
    const closing = t.app.close(10_000);
    await new Promise((r) => setTimeout(r, 200));
    worker.complete(worker.assignments[0]!.assignmentId, 'first');
    await eventually(() => worker.assignments.length === 2, 5_000, 'the second assignment');
    worker.complete(worker.assignments[1]!.assignmentId, 'second');
    const { results } = await pending;
    expect(results.map((r) => [r.toolCallId, r.isError, r.output])).toEqual([
      ['c1', false, 'first'],
      ['c2', false, 'second'],
    ]);
    await closing;
  } finally {
    await t.close();
  }
});
