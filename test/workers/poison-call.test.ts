import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, type TestWorker } from './worker-harness';

// A call whose arguments crash the worker running it (an input its parser chokes on) was retried on
// the next worker, and every worker it reached died: a read-only call's second attempt, then the
// model calling again, each time UNAVAILABLE "it is safe to call again". Now the second worker to
// stop under the same arguments fails the call UNEXPECTED, not recoverable, and those arguments are
// sent to no worker for 10 minutes (any session); a graceful stop (half-close) does not count.

const readOnly = { name: 'w_parse', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, retry: { initialBackoffMs: 20 } };
const POISON = '{"doc":"%PDF-poison"}';
const call = (t: WorkerApp, args: string, sessionId = 's1') => t.dispatch.dispatch({ sessionId, calls: [{ id: 'c1', name: 'w_parse', arguments: args }] }).then((r) => r.results[0]!);
/** A worker that dies (its stream dropped, as a crashed process's) on the poison input, else echoes. */
const crashesOnPoison = (id: string, worker: () => TestWorker) => (a: Parameters<ReturnType<typeof echoAnswer>>[0]) => {
  if (a.call?.arguments !== POISON) return echoAnswer(id)(a);
  setImmediate(() => worker().disconnect());
  return undefined;
};

describe('a call that stops the workers running it', () => {
  let t: WorkerApp;
  const warnings: { message: string; fields: Record<string, unknown> }[] = [];
  beforeEach(async () => {
    warnings.length = 0;
    const record = (message: string, fields: Record<string, unknown> = {}) => void warnings.push({ message, fields });
    t = await startWorkerApp({ heartbeatTimeoutMs: 600 }, { logger: { debug() {}, info() {}, warn: record, error: record } });
  });
  afterEach(() => t.close());

  it('fails UNEXPECTED, not recoverable, at the second worker it stops, and is then sent to no worker, in any session; other arguments still run', async () => {
    let a!: TestWorker;
    let b!: TestWorker;
    a = await t.worker({ id: 'a', tools: [readOnly], answer: crashesOnPoison('a', () => a) });
    b = await t.worker({ id: 'b', tools: [readOnly], answer: crashesOnPoison('b', () => b) });
    const result = await call(t, POISON);
    expect(a.assignments.length + b.assignments.length).toBe(2);
    expect(result.attempts).toBe(2);
    expect(result.error).toMatchObject({ kind: ErrorKind.UNEXPECTED, recoverable: false });
    expect(result.error?.message).toMatch(/^worker "[ab]" hosting "w_parse" disconnected while running the call, the second worker to stop while running it \(these arguments\) within 10 minutes: the call may be what stops them, so it is sent to no worker for 10 minutes$/);
    expect(result.output).toContain('calling it again with the same arguments is refused for 10 minutes');
    expect(warnings.filter((w) => w.message.startsWith('workers stopped under two calls'))).toEqual([
      { message: 'workers stopped under two calls with the same arguments: those arguments are sent to no worker here for 10 minutes', fields: expect.objectContaining({ tenant: 'default', tool: 'w_parse', argsBytes: POISON.length }) },
    ]);

    const c = await t.worker({ id: 'c', tools: [readOnly], answer: echoAnswer('c') });
    const again = await call(t, POISON, 'another-session');
    expect(again.error).toMatchObject({ kind: ErrorKind.UNEXPECTED, recoverable: false });
    expect(again.error?.message).toMatch(/^the call was not sent: 2 workers hosting "w_parse" stopped while running it \(these arguments\) within 10 minutes, so it is sent to no worker for \d+ more seconds; the tool was not executed$/);
    expect(again.attempts).toBe(1);
    expect(c.assignments).toHaveLength(0);
    expect(await call(t, '{"doc":"fine"}', 'another-session')).toMatchObject({ isError: false, output: '{"worker":"c","args":{"doc":"fine"}}' });
  });

  it('is retried as before after one stop: the first worker to stop under it says nothing of the arguments', async () => {
    let a!: TestWorker;
    a = await t.worker({ id: 'a', tools: [readOnly], answer: crashesOnPoison('a', () => a) });
    await t.worker({ id: 'b', tools: [readOnly], answer: echoAnswer('b') });
    const result = await call(t, POISON);
    expect(result).toMatchObject({ isError: false, attempts: 2 });
    expect(JSON.parse(result.output)).toMatchObject({ worker: 'b' });
    expect(warnings.filter((w) => w.message.startsWith('workers stopped'))).toEqual([]);
  });

  it('does not count a worker stopping cleanly (a half-close) while it holds the call', async () => {
    const closing = (id: string, worker: () => TestWorker) => () => {
      setImmediate(() => void worker().close());
      return undefined;
    };
    for (const id of ['a', 'b', 'c']) {
      let w!: TestWorker;
      w = await t.worker({ id, tools: [readOnly], answer: closing(id, () => w) });
      const result = await call(t, POISON, `s-${id}`);
      expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
      expect(result.error?.message).not.toContain('stop while running it');
    }
    const d = await t.worker({ id: 'd', tools: [readOnly], answer: echoAnswer('d') });
    expect(await call(t, POISON, 's-d')).toMatchObject({ isError: false });
    expect(d.assignments).toHaveLength(1);
  });
});
