import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually, type TestWorker } from './worker-harness';

const readOnly = { name: 'w_read', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, retry: { initialBackoffMs: 20 } };
const writing = { name: 'w_write', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, retry: { initialBackoffMs: 20 } };
const dieOnAssignment = (worker: () => TestWorker) => () => {
  setImmediate(() => worker().disconnect());
  return undefined;
};
const call = (t: WorkerApp, name: string, id = 'c1', args = '{"n":1}', sessionId = 's1') => t.dispatch.dispatch({ sessionId, calls: [{ id, name, arguments: args }] }).then((r) => r.results[0]!);

describe('a worker dying mid-call', () => {
  let t: WorkerApp;
  beforeEach(async () => {
    t = await startWorkerApp({ heartbeatTimeoutMs: 600 });
  });
  afterEach(() => t.close());

  it('retries a read-only call on another worker', async () => {
    let first!: TestWorker;
    first = await t.worker({ id: 'first', tools: [readOnly], answer: dieOnAssignment(() => first) });
    const second = await t.worker({ id: 'second', tools: [readOnly], answer: echoAnswer('second') });
    const result = await call(t, 'w_read');
    expect(first.assignments).toHaveLength(1);
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.output)).toEqual({ worker: 'second', args: { n: 1 } });
    expect(result.attempts).toBe(2);
    expect(second.assignments[0]!.attempt).toBe(2);
  });

  // The retry's "not executed" was untrue of the call: its first attempt was sent and may have run.
  it('retries a read-only call, which then fails BEFORE when no other worker is left, saying an earlier attempt was sent', async () => {
    let only!: TestWorker;
    only = await t.worker({ id: 'only', tools: [readOnly], answer: dieOnAssignment(() => only) });
    const result = await call(t, 'w_read');
    expect(result.isError).toBe(true);
    expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(result.error?.message).toBe('no worker is connected any longer for tool "w_read" to try the call again; an earlier attempt was sent to a worker (the call may or may not have run)');
    expect(result.error?.message).not.toContain('not executed');
    expect(result.error?.recoverable).toBe(true);
    expect(result.attempts).toBe(2);
    expect(only.assignments).toHaveLength(1);
  });

  it('says an earlier attempt was sent through every later attempt that finds no worker, and only for that call', async () => {
    let only!: TestWorker;
    const three = { ...readOnly, name: 'w_three', retry: { initialBackoffMs: 20, maxAttempts: 3 } };
    only = await t.worker({ id: 'only', tools: [three], answer: dieOnAssignment(() => only) });
    const result = await call(t, 'w_three');
    expect(result.attempts).toBe(3);
    expect(result.error?.message).toBe('no worker is connected any longer for tool "w_three" to try the call again; an earlier attempt was sent to a worker (the call may or may not have run)');
    // The same call id in the next turn, whose attempts reach no worker: not executed, truly.
    // (Its breaker, opened by these failures, adds why it was not retried further: not what is looked at.)
    const next = await call(t, 'w_three');
    expect(next.attempts).toBe(3);
    expect(next.error?.message).toMatch(/^no worker is connected for tool "w_three"; the call was not executed/);
  });

  it("a read-only call whose worker died is not told it may have taken effect (a read has no effect to check)", async () => {
    let once!: TestWorker;
    once = await t.worker({ id: 'once', tools: [{ ...readOnly, name: 'w_once', retry: { maxAttempts: 1 } }], answer: dieOnAssignment(() => once) });
    const result = await call(t, 'w_once');
    expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(result.error?.message).toMatch(/^worker "once" hosting "w_once" .* while running the call$/);
    expect(result.error?.suggestion).not.toMatch(/may or may not have taken effect/);
    expect(JSON.parse(result.output)).toMatchObject({ kind: 'UNAVAILABLE', attempts: 1 });
  });

  it('does not retry a side-effecting call, and an identical re-call reports OUTCOME_UNKNOWN', async () => {
    let first!: TestWorker;
    first = await t.worker({ id: 'first', tools: [writing], answer: dieOnAssignment(() => first) });
    const second = await t.worker({ id: 'second', tools: [writing], answer: echoAnswer('second') });
    const result = await call(t, 'w_write');
    expect(result.isError).toBe(true);
    expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(result.error?.message).toBe('worker "first" hosting "w_write" disconnected while running the call');
    expect(JSON.parse(result.output)).toMatchObject({ kind: 'UNAVAILABLE', recoverable: false, attempts: 1, retried: false, suggestion: expect.stringContaining('verify its effect (for example by reading the current state) before anything else. The same call again is answered OUTCOME_UNKNOWN') });
    expect(result.error?.recoverable).toBe(false);
    expect(result.attempts).toBe(1);
    const again = await call(t, 'w_write', 'c2');
    expect(again.error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
    expect(second.assignments).toHaveLength(0);
    const other = await call(t, 'w_write', 'c3', '{"n":2}');
    expect(other.isError).toBe(false);
    expect(second.assignments).toHaveLength(1);
  });

  it('treats a worker silent past the heartbeat timeout as gone, with its assignments', async () => {
    let silent!: TestWorker;
    silent = await t.worker({
      id: 'silent',
      tools: [writing],
      answer: () => {
        silent.stopHeartbeats();
        return undefined;
      },
    });
    const started = Date.now();
    const result = await call(t, 'w_write');
    expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(result.error?.message).toBe('worker "silent" hosting "w_write" sent no heartbeat for 600 ms while running the call');
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    const status = await silent.ended;
    expect(status.details).toBe('worker sent no heartbeat for 600 ms; its assignments were failed');
    expect((await call(t, 'w_write', 'c2')).error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
  });

  it('fails the call DURING when the worker process is killed', async () => {
    const child = spawn(process.execPath, [path.join(__dirname, 'fixtures/kill-worker.js'), t.address, 'w_child', 'EFFECT_SIDE_EFFECT'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    try {
      await eventually(async () => (await t.registry.listTools({})).tools.some((x) => x.name === 'w_child'), 10_000, 'the child worker');
      const pending = call(t, 'w_child');
      await eventually(() => out.includes('ASSIGNED'), 10_000, 'the assignment');
      child.kill('SIGKILL');
      const result = await pending;
      expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
      expect(result.error?.message).toBe('worker "child" hosting "w_child" disconnected while running the call');
      expect(result.error?.recoverable).toBe(false);
      expect(JSON.parse(result.output)).toMatchObject({ recoverable: false, suggestion: expect.stringContaining('verify its effect (for example by reading the current state) before anything else. The same call again is answered OUTCOME_UNKNOWN') });
      expect(result.attempts).toBe(1);
      expect((await call(t, 'w_child', 'c2')).error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('a tool whose workers are all gone', () => {
  let t: WorkerApp;
  beforeEach(async () => {
    t = await startWorkerApp();
  });
  afterEach(() => t.close());

  it('stays registered and fails BEFORE execution, so even a side-effecting call is retried', async () => {
    const worker = await t.worker({ id: 'w', tools: [writing], answer: echoAnswer('w') });
    await worker.close();
    expect((await t.registry.listTools({})).tools.map((x) => x.name)).toContain('w_write');
    const result = await call(t, 'w_write');
    expect(result.isError).toBe(true);
    expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(result.error?.message).toBe('no worker is connected for tool "w_write"; the call was not executed');
    expect(result.error?.recoverable).toBe(true);
    expect(result.attempts).toBe(2);
    const back = await t.worker({ id: 'back', tools: [writing], answer: echoAnswer('back') });
    const retried = await call(t, 'w_write', 'c2');
    expect(retried.isError).toBe(false);
    expect(back.assignments).toHaveLength(1);
  });
});

describe('cancellation', () => {
  let t: WorkerApp;
  beforeEach(async () => {
    t = await startWorkerApp();
  });
  afterEach(() => t.close());

  it('sends the worker a cancel when the client cancels the Dispatch', async () => {
    const worker = await t.worker({ id: 'w', tools: [readOnly] });
    const controller = new AbortController();
    const pending = t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'w_read', arguments: '{}' }] }, { signal: controller.signal });
    await eventually(() => worker.assignments.length === 1, 5_000, 'the assignment');
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 1 });
    await eventually(() => worker.cancels.length === 1, 5_000, 'the cancel');
    expect(worker.cancels[0]).toBe(worker.assignments[0]!.assignmentId);
  });

  it('sends the worker a cancel when the tool times out', async () => {
    const worker = await t.worker({ id: 'w', tools: [{ ...writing, timeoutMs: 200 }] });
    const result = await call(t, 'w_write');
    expect(result.error?.kind).toBe(ErrorKind.TIMEOUT);
    await eventually(() => worker.cancels.length === 1, 5_000, 'the cancel');
    expect(worker.cancels[0]).toBe(worker.assignments[0]!.assignmentId);
    expect((await call(t, 'w_write', 'c2')).error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
    // Its answer after the timeout replaces the UNKNOWN mark (late-answer.ts; it was dropped): the same call is then replayed.
    worker.complete(worker.assignments[0]!.assignmentId, 'too late');
    let n = 2;
    await eventually(async () => (await call(t, 'w_write', `c${++n}`)).idempotentReplay, 5_000, 'the replay');
    expect(await call(t, 'w_write', 'c9')).toMatchObject({ output: 'too late', idempotentReplay: true });
    expect(worker.assignments).toHaveLength(1);
  });
});
