import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { eventually } from './worker-harness';

// A worker author's probe: a side-effecting worker call its client cancelled, whose worker went on
// and answered within the call's timeout, stayed OUTCOME_UNKNOWN for the record's hour: the answer
// was dropped without a word, though an answer after a timeout replaces the UNKNOWN mark
// (worker-late-answer.test.ts). The cancel still cuts the call off; the answer is now recorded as
// a late one, and the same call made again is replayed. Real Work streams.

const lines: string[] = [];
const logger: Logger = { debug() {}, info: (m) => void lines.push(m), warn: (m) => void lines.push(m), error() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const send = { name: 'w_send', description: 'send', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 5_000, retry: { maxAttempts: 1 } };

let t: WorkerApp;
beforeEach(async () => {
  lines.length = 0;
  t = await startWorkerApp({}, { logger });
});
afterEach(() => t.close());

const call = (id: string, signal?: AbortSignal) => t.dispatch.dispatch({ sessionId: 's', calls: [{ id, name: 'w_send', arguments: '{"to":"a@example.com"}' }] }, { signal }).then((r) => r.results[0]!);

test("the worker's answer after its client's cancel replaces OUTCOME_UNKNOWN: the same call made again is replayed, and ran once", async () => {
  const worker = await t.worker({ id: 'w1', tools: [send], answer: () => sleep(400).then(() => ({ output: 'sent to a@example.com' })) });
  const controller = new AbortController();
  const cancelled = call('c1', controller.signal).catch((error: Error) => error);
  await eventually(() => worker.assignments.length === 1, 5_000, 'the assignment');
  controller.abort();
  expect(await cancelled).toBeInstanceOf(Error);
  await eventually(() => lines.includes("a side-effecting call's tool answered after its client's cancel cut it off; the answer replaces OUTCOME_UNKNOWN for the same call made again"), 5_000, 'the late answer recorded');
  const again = await call('c2');
  expect(again).toMatchObject({ isError: false, output: 'sent to a@example.com', idempotentReplay: true });
  expect(worker.assignments).toHaveLength(1);
});

test('before the answer, the same call is OUTCOME_UNKNOWN, as it was', async () => {
  const worker = await t.worker({ id: 'w1', tools: [send], answer: () => sleep(1_500).then(() => ({ output: 'sent' })) });
  const controller = new AbortController();
  const cancelled = call('c1', controller.signal).catch((error: Error) => error);
  await eventually(() => worker.assignments.length === 1, 5_000, 'the assignment');
  controller.abort();
  await cancelled;
  await sleep(200); // the cut-off attempt's UNKNOWN mark written
  expect((await call('c2')).error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
});
