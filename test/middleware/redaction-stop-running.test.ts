// A read-only call cut off (its timeout, its client's cancel) while its large output is being
// redacted: the thread redacting it is ended (its job dropped) when the output is past
// STOP_RUNNING_CHARS, rather than left to run for up to ~1.2 s a Mi characters (20 s for 16 Mi)
// holding every other tenant's output back; the next job starts a new thread. A smaller one is
// left to end, and a side-effecting call's output is kept (redaction-late-jobs.test.ts). Before,
// the running job always ran to its end. The real worker thread; needs dist/ (`npm run build`).
import { createRedactionWorker, redactSecrets, RedactionWorkerError, STOP_RUNNING_CHARS, type RedactionWorker } from '../../src/middleware';
import { abortableCall } from '../helpers/abortable-call';

jest.setTimeout(30_000);

const reasonOf = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'redacted',
    (error: unknown) => (error instanceof RedactionWorkerError ? error.reason : `other: ${String(error)}`),
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The slowest text to redact, past STOP_RUNNING_CHARS: ~4.8 Mi characters, ~5 s alone on a core. */
const HUGE = 'pwd="a" '.repeat(600_000);

let worker: RedactionWorker;
afterEach(() => worker.close());

test("a read-only call's huge output cut off while redacted: its thread is ended at once and the next tenant's output is redacted by a new one", async () => {
  expect(HUGE.length).toBeGreaterThan(STOP_RUNNING_CHARS);
  worker = createRedactionWorker();
  const call = abortableCall('A');
  const huge = reasonOf(worker.redact([HUGE], call, false));
  const next = worker.redact(['password: hunter2'], abortableCall('B'), false);
  // The thread starts (~150 ms) and takes the huge job; the cut comes while it redacts.
  await sleep(400);
  const cut = Date.now();
  call.abort();
  expect(await huge).toBe('dropped');
  expect(await next).toEqual([redactSecrets('password: hunter2')]);
  // A new thread's start, not the ~4.5 s left of the huge job (measured here: 0.1-0.3 s).
  expect(Date.now() - cut).toBeLessThan(2_500);
  expect(call.told).toEqual([]);
});

test('an output under STOP_RUNNING_CHARS cut off while redacted is left to end', async () => {
  worker = createRedactionWorker();
  const text = 'pwd="a" '.repeat(60_000);
  expect(text.length).toBeLessThan(STOP_RUNNING_CHARS);
  const call = abortableCall('A');
  const running = worker.redact([text], call, false);
  await sleep(250);
  call.abort();
  expect(await running).toEqual([redactSecrets(text)]);
});

test("a side-effecting call's huge output cut off while redacted is not stopped: its answer is recorded", async () => {
  worker = createRedactionWorker();
  const text = 'pwd="a" '.repeat(140_000);
  expect(text.length).toBeGreaterThan(STOP_RUNNING_CHARS);
  const call = abortableCall('A');
  const running = worker.redact([text], call, true);
  await sleep(250);
  call.abort();
  expect(call.told).toEqual([true]);
  expect(await running).toEqual([redactSecrets(text)]);
});
