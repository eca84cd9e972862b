// A side-effecting call's output held in the redaction worker when its call is cut off (its
// timeout, its client's cancel): its tool ran and answered, so the job is kept, waiting or
// running, and the call is told the answer is coming (lateAnswerPending): late-answer.ts records
// it in place of OUTCOME_UNKNOWN. Before, a waiting job was dropped at the cut and a running one's
// answer went unread: the call stayed OUTCOME_UNKNOWN for its record's hour with the answer in
// hand. A read-only call's job is dropped as before; kept jobs are bounded (LATE_JOBS_MAX_CHARS).
// The real worker thread; needs dist/ (`npm run build`).
import { createRedactionWorker, LATE_JOBS_MAX_CHARS, redactSecrets, RedactionWorkerError, type RedactionWorker } from '../../src/middleware';
import { abortableCall } from '../helpers/abortable-call';

jest.setTimeout(30_000);

const cutOff = abortableCall;

const reasonOf = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'redacted',
    (error: unknown) => (error instanceof RedactionWorkerError ? error.reason : `other: ${String(error)}`),
  );

/** ~0.3 s of redaction alone on a core: the job that keeps the thread busy. */
const SLOW = 'pwd="a" '.repeat(30_000);
const SECRET = 'password: hunter2\n'.repeat(2_000);

let worker: RedactionWorker;
afterEach(() => worker.close());

test("a side-effecting call's job cut off while it waits is kept and redacted, and the call told so; a read-only call's is dropped", async () => {
  worker = createRedactionWorker();
  const busy = worker.redact([SLOW], cutOff('A'), false);
  const sideEffecting = cutOff('B');
  const readOnly = cutOff('C');
  const kept = worker.redact([SECRET, 'token=abcd1234efgh5678'], sideEffecting, true);
  const dropped = reasonOf(worker.redact([SECRET], readOnly, false));
  sideEffecting.abort();
  readOnly.abort();
  expect(await dropped).toBe('dropped');
  expect(readOnly.told).toEqual([]);
  expect(sideEffecting.told).toEqual([true]);
  expect(await kept).toEqual([redactSecrets(SECRET), redactSecrets('token=abcd1234efgh5678')]);
  expect(await reasonOf(busy)).toBe('redacted');
});

test("a side-effecting call's job cut off while it runs: its answer still comes, and the call is told so", async () => {
  worker = createRedactionWorker();
  const call = cutOff('A');
  // ~0.8 Mi characters, ~0.6-1 s: SLOW's ~0.3 s ended before the cut once in CI.
  const longer = 'pwd="a" '.repeat(100_000);
  const running = worker.redact([longer], call, true);
  // The thread starts (~150 ms) and takes the job; the cut comes while it redacts.
  await new Promise((r) => setTimeout(r, 250));
  call.abort();
  expect(call.told).toEqual([true]);
  expect(await running).toEqual([redactSecrets(longer)]);
});

test("a side-effecting call's job whose deadline passed before its turn is kept; a read-only call's is dropped", async () => {
  worker = createRedactionWorker();
  const busy = worker.redact([SLOW], cutOff('A'), false);
  const kept = worker.redact([SECRET], cutOff('B', Date.now() + 1), true);
  const dropped = reasonOf(worker.redact([SECRET], cutOff('C', Date.now() + 1), false));
  expect(await dropped).toBe('dropped');
  expect(await kept).toEqual([redactSecrets(SECRET)]);
  await busy;
});

test('kept jobs are bounded: past the bound a cut-off job is dropped at once (the call told still: its output, withheld, is what it records), and room comes back as kept jobs end', async () => {
  expect(LATE_JOBS_MAX_CHARS).toBe(32 * 1024 * 1024);
  worker = createRedactionWorker({}, { lateMaxChars: 2 * SECRET.length });
  const busy = worker.redact([SLOW], cutOff('A'), false);
  const first = cutOff('B');
  const second = cutOff('B');
  const third = cutOff('C');
  const jobs = [worker.redact([SECRET], first, true), worker.redact([SECRET], second, true), worker.redact(['y'], third, true)].map(reasonOf);
  first.abort();
  second.abort();
  third.abort();
  expect([first.told, second.told, third.told]).toEqual([[true], [true], [true]]);
  expect(await jobs[2]).toBe('dropped');
  // A late answer (its call ended before its output came) finds no room either.
  const message = await worker.redact(['y'], third, true).catch((error: Error) => error.message);
  expect(message).toBe(`the call had ended when its output came, with ${2 * SECRET.length} characters of ended calls' outputs waiting at most`);
  expect(await Promise.all(jobs.slice(0, 2))).toEqual(['redacted', 'redacted']);
  await busy;
  // Both kept jobs ended: the bound has room again.
  expect(await worker.redact(['password: hunter2'], third, true)).toEqual([redactSecrets('password: hunter2')]);
});
