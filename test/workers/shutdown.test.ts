import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp } from './worker-app';
import { echoAnswer, eventually } from './worker-harness';

const tool = { name: 'w_slow', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY };

describe('shutdown with workers connected', () => {
  it('ends idle worker streams at once instead of waiting out the grace period', async () => {
    const t = await startWorkerApp();
    const worker = await t.worker({ id: 'w', tools: [tool], answer: echoAnswer('w') });
    const started = Date.now();
    await t.app.close(10_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect((await worker.ended).code).toBe(0);
    await t.close();
  });

  it('lets a call in flight finish on its worker, then ends the stream', async () => {
    const t = await startWorkerApp();
    const worker = await t.worker({ id: 'w', tools: [tool] });
    const pending = t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'w_slow', arguments: '{}' }] });
    await eventually(() => worker.assignments.length === 1, 5_000, 'the assignment');
    const closing = t.app.close(10_000);
    await new Promise((r) => setTimeout(r, 200));
    worker.complete(worker.assignments[0]!.assignmentId, 'finished');
    expect((await pending).results[0]!.output).toBe('finished');
    expect((await worker.ended).code).toBe(0);
    await closing;
    await t.close();
  });
});
