import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer } from './worker-harness';

// A worker that heartbeats but never answers used to be picked again as soon as its assignment
// timed out (the pool forgot it at once, so it looked idle): its timeouts opened the tool's
// breaker, and its healthy peer got a few calls only.
const tool = { name: 'w_mixed', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 300, concurrencySafe: true, retry: { maxAttempts: 1 } };

describe('a silent worker beside a healthy one', () => {
  let t: WorkerApp;
  beforeEach(async () => {
    t = await startWorkerApp();
  });
  afterEach(() => t.close());

  it('is not picked again while its timed-out assignment is unanswered: the calls run on its peer, the breaker stays closed', async () => {
    const silent = await t.worker({ id: 'silent', tools: [tool] });
    const healthy = await t.worker({ id: 'healthy', tools: [tool], answer: echoAnswer('healthy') });
    const kinds: Record<string, number> = {};
    for (let i = 0; i < 40; i++) {
      const result = (await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${i}`, name: 'w_mixed', arguments: `{"i":${i}}` }] })).results[0]!;
      const kind = result.error ? ErrorKind[result.error.kind] : 'ok';
      kinds[kind] = (kinds[kind] ?? 0) + 1;
    }
    expect(kinds.BREAKER_OPEN).toBeUndefined();
    expect(kinds.ok).toBeGreaterThanOrEqual(38);
    expect(silent.assignments.length).toBeLessThanOrEqual(2);
    expect(healthy.assignments.length).toBeGreaterThanOrEqual(38);
  });

  it('a late answer clears the timed-out assignment, and the worker shares calls again', async () => {
    const late = await t.worker({ id: 'late', tools: [tool] });
    await t.worker({ id: 'other', tools: [tool], answer: echoAnswer('other') });
    // The first call goes to one of them; make sure the late one holds a timed-out assignment.
    for (let i = 0; i < 2 && late.assignments.length === 0; i++) await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: `a${i}`, name: 'w_mixed', arguments: `{"a":${i}}` }] });
    expect(late.assignments).toHaveLength(1);
    late.complete(late.assignments[0]!.assignmentId, 'late');
    await new Promise((r) => setTimeout(r, 100));
    // Now idle, the late worker is picked in its turn (its next answer never comes; the call times out).
    const next = await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'b', name: 'w_mixed', arguments: '{"b":1}' }] });
    const again = await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'w_mixed', arguments: '{"c":1}' }] });
    expect(late.assignments.length).toBe(2);
    expect([next, again].filter((r) => r.results[0]!.isError)).toHaveLength(1);
  });

  it('a worker whose call timed out once, and that answers no cancel (as the examples do), shares calls again within seconds', async () => {
    let slow = true;
    // Slow for its first call only; it never answers a cancelled assignment.
    const once = await t.worker({
      id: 'once',
      tools: [tool],
      answer: async (a) => {
        if (slow) {
          slow = false;
          await new Promise((r) => setTimeout(r, 600));
          return undefined;
        }
        return { output: `once:${a.assignmentId}`, isError: false };
      },
    });
    await t.worker({ id: 'peer', tools: [tool], answer: echoAnswer('peer') });
    for (let i = 0; i < 2 && once.cancels.length === 0; i++) await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: `s${i}`, name: 'w_mixed', arguments: `{"s":${i}}` }] });
    expect(once.cancels).toHaveLength(1);
    const before = once.assignments.length;
    // Within the charge's floor (2 s) it is picked only once its peer is as busy; then it shares again.
    await new Promise((r) => setTimeout(r, 2_200));
    for (let i = 0; i < 10; i++) await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: `n${i}`, name: 'w_mixed', arguments: `{"n":${i}}` }] });
    expect(once.assignments.length - before).toBeGreaterThanOrEqual(4);
  });
});
