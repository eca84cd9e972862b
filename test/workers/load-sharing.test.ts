import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer } from './worker-harness';

const tool = { name: 'w_share', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY };
const delayed = (id: string, ms: number) => async (a: Parameters<ReturnType<typeof echoAnswer>>[0]) => {
  await new Promise((r) => setTimeout(r, ms));
  return echoAnswer(id)(a);
};

describe('several workers for one tool', () => {
  let t: WorkerApp;
  beforeEach(async () => {
    t = await startWorkerApp();
  });
  afterEach(() => t.close());

  it('share concurrent calls between them', async () => {
    const workers = [await t.worker({ id: 'a', tools: [tool], answer: delayed('a', 30) }), await t.worker({ id: 'b', tools: [tool], answer: delayed('b', 30) }), await t.worker({ id: 'c', tools: [tool], answer: delayed('c', 30) })];
    const calls = Array.from({ length: 30 }, (_, i) => t.dispatch.dispatch({ sessionId: `s${i}`, calls: [{ id: `c${i}`, name: 'w_share', arguments: `{"i":${i}}` }] }));
    const outputs = (await Promise.all(calls)).map((r) => JSON.parse(r.results[0]!.output) as { worker: string; args: { i: number } });
    expect(outputs.map((o) => o.args.i)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    for (const w of workers) expect(w.assignments.length).toBeGreaterThanOrEqual(7);
    expect(workers.reduce((n, w) => n + w.assignments.length, 0)).toBe(30);
  });

  it('send sequential calls round-robin when no worker is busier', async () => {
    const a = await t.worker({ id: 'a', tools: [tool], answer: echoAnswer('a') });
    const b = await t.worker({ id: 'b', tools: [tool], answer: echoAnswer('b') });
    for (let i = 0; i < 10; i++) await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${i}`, name: 'w_share', arguments: `{"i":${i}}` }] });
    expect(a.assignments).toHaveLength(5);
    expect(b.assignments).toHaveLength(5);
  });

  it('prefer the worker with fewer calls outstanding', async () => {
    const slow = await t.worker({ id: 'slow', tools: [tool] });
    const fast = await t.worker({ id: 'fast', tools: [tool], answer: echoAnswer('fast') });
    const held = t.dispatch.dispatch({ sessionId: 'held', calls: [{ id: 'h', name: 'w_share', arguments: '{"i":-1}' }] });
    const deadline = Date.now() + 5_000;
    while (slow.assignments.length + fast.assignments.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const holder = slow.assignments.length === 1 ? slow : fast;
    const others = [];
    for (let i = 0; i < 6; i++) others.push((await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${i}`, name: 'w_share', arguments: `{"i":${i}}` }] })).results[0]!);
    expect(others.every((r) => !r.isError)).toBe(true);
    if (holder === slow) expect(fast.assignments).toHaveLength(6);
    slow.complete(slow.assignments[0]!.assignmentId, 'done');
    expect((await held).results[0]!.output).toBe('done');
  });
});
