import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp, type WorkerApp } from './worker-app';

// A tool author's probe: a worker could not say its tool did not run a call for now (a rate limit,
// a dependency down) and when to call again: every error was TOOL_ERROR after, not recoverable,
// not retried, counted by the breaker, where an HTTP tool's 429 with Retry-After is a refusal to
// run, retried after its wait. Completion.retry_after_ms now says so. Real Work streams.

const tool = (name: string, effect: Effect) => ({ name, description: name, inputSchema: '{"type":"object"}', effect, timeoutMs: 5_000, retry: { maxAttempts: 2, initialBackoffMs: 1, maxBackoffMs: 2_000 } });

let t: WorkerApp;
beforeEach(async () => {
  t = await startWorkerApp();
});
afterEach(() => t.close());

const call = (name: string, n: number) => t.dispatch.dispatch({ sessionId: `s${n}`, calls: [{ id: `c${n}`, name, arguments: JSON.stringify({ n }) }] }).then((r) => r.results[0]!);

test('a side-effecting call refused for now is retried after the wait (nothing ran), and succeeds', async () => {
  let seen = 0;
  await t.worker({ id: 'w1', tools: [tool('w_send', Effect.SIDE_EFFECT)], answer: () => (++seen === 1 ? { output: 'rate limited', isError: true, retryAfterMs: 100 } : { output: 'sent' }) });
  const started = Date.now();
  const result = await call('w_send', 1);
  expect(result).toMatchObject({ isError: false, output: 'sent', attempts: 2 });
  expect(Date.now() - started).toBeGreaterThanOrEqual(90);
});

test("a wait past the retry policy's backoff goes back to the model: UNAVAILABLE, recoverable, retry_after_ms, the worker's message", async () => {
  await t.worker({ id: 'w1', tools: [tool('w_send', Effect.SIDE_EFFECT)], answer: () => ({ output: 'quota spent', isError: true, retryAfterMs: 60_000 }) });
  const result = await call('w_send', 2);
  expect(result.error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true, retryAfterMs: 60_000, message: expect.stringContaining('quota spent') });
  expect(JSON.parse(result.output)).toMatchObject({ kind: 'UNAVAILABLE', retry_after_ms: 60_000 });
});

test("refusals for now do not open the tool's breaker; an error without a wait is TOOL_ERROR, as before", async () => {
  let plain = false;
  const worker = await t.worker({ id: 'w1', tools: [tool('w_look', Effect.READ_ONLY)], answer: () => (plain ? { output: 'no such row', isError: true } : { output: 'busy', isError: true, retryAfterMs: 60_000 }) });
  for (let n = 10; n < 17; n++) expect((await call('w_look', n)).error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(worker.assignments).toHaveLength(7);
  plain = true;
  expect((await call('w_look', 20)).error?.kind).toBe(ErrorKind.TOOL_ERROR);
});
