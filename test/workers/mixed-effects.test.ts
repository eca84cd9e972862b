import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually } from './worker-harness';

const charge = (effect: Effect) => ({ name: 'charge', inputSchema: '{"type":"object"}', effect });
const call = (t: WorkerApp, i: number) => t.dispatch.dispatch({ sessionId: `s${i}`, calls: [{ id: `c${i}`, name: 'charge', arguments: `{"i":${i}}` }] }).then((r) => r.results[0]!);
const REFUSAL = `no worker connected for tool "charge" runs it as registered (read-only): worker "a" declares it side-effecting; the tool's registration comes from another worker's hello; the call was not executed`;

// Workers of one tool declaring different effects (one mid-upgrade): the last hello's is registered.
describe('workers of one tool declaring different effects', () => {
  let t: WorkerApp;
  beforeEach(async () => {
    t = await startWorkerApp();
  });
  afterEach(() => t.close());

  it('send a call registered read-only only to workers that declared it read-only, and refuse it before running when none is left', async () => {
    const a = await t.worker({ id: 'a', tools: [charge(Effect.SIDE_EFFECT)], answer: echoAnswer('a') });
    const b = await t.worker({ id: 'b', tools: [charge(Effect.READ_ONLY)], answer: echoAnswer('b') });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => call(t, i)));
    expect(results.map((r) => r.isError)).toEqual(Array(10).fill(false));
    expect(results.map((r) => (JSON.parse(r.output) as { worker: string }).worker)).toEqual(Array(10).fill('b'));
    expect(a.assignments).toHaveLength(0);
    expect(b.assignments).toHaveLength(10);

    b.disconnect();
    let i = 100;
    let last: Awaited<ReturnType<typeof call>> | undefined;
    await eventually(async () => (last = await call(t, i++)).error?.message === REFUSAL, 5_000, 'the refusal once b is gone');
    expect(last!.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(last!.error?.recoverable).toBe(true);
    expect(a.assignments).toHaveLength(0);
  });

  it('send a call registered side-effecting to every worker, one declaring it read-only too', async () => {
    const b = await t.worker({ id: 'b', tools: [charge(Effect.READ_ONLY)], answer: echoAnswer('b') });
    const a = await t.worker({ id: 'a', tools: [charge(Effect.SIDE_EFFECT)], answer: echoAnswer('a') });
    for (let i = 0; i < 10; i++) expect((await call(t, i)).isError).toBe(false);
    expect(a.assignments).toHaveLength(5);
    expect(b.assignments).toHaveLength(5);
  });
});
