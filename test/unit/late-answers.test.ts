import { create } from '@bufbuild/protobuf';
import { CompletionSchema } from '../../gen/dispatch/v1/worker_pb';
import { createLateAnswers, LATE_ANSWER_MS } from '../../src/executors/worker/late-answers';
import type { WorkerLink } from '../../src/executors/worker/worker-link';

// The calls of side-effecting assignments abandoned at their timeout, waiting for their workers'
// answers: each settles once, with the answer or its abort reason, within LATE_ANSWER_MS.

const linkA = { workerId: 'a' } as WorkerLink;
const linkB = { workerId: 'b' } as WorkerLink;
const done = (assignmentId: string, output: string, isError = false) => create(CompletionSchema, { assignmentId, output, isError });

function waiting(link: WorkerLink) {
  const seen: string[] = [];
  return { seen, wait: { link, tool: 't', reason: 'timed out', resolve: (o: string) => void seen.push(`ok ${o}`), reject: (e: unknown) => void seen.push(`err ${e instanceof Error ? e.message : String(e)}`) } };
}

afterEach(() => jest.useRealTimers());

test("an answer settles its call once, from its own worker only; an error answer is the tool's error", () => {
  const late = createLateAnswers();
  const one = waiting(linkA);
  const two = waiting(linkA);
  late.hold('1', one.wait);
  late.hold('2', two.wait);
  expect(late.answer(linkB, done('1', 'x'))).toBe(false);
  expect(late.answer(linkA, done('1', 'sent'))).toBe(true);
  expect(late.answer(linkA, done('1', 'again'))).toBe(false);
  expect(late.answer(linkA, done('2', 'mailbox full', true))).toBe(true);
  expect(one.seen).toEqual(['ok sent']);
  expect(two.seen).toEqual(['err tool "t" reported an error: mailbox full']);
  late.drop();
});

test('past LATE_ANSWER_MS a call is given up with its abort reason; a worker gone gives up its own calls only', () => {
  jest.useFakeTimers();
  const late = createLateAnswers();
  const a = waiting(linkA);
  const b = waiting(linkB);
  late.hold('a', a.wait);
  jest.advanceTimersByTime(LATE_ANSWER_MS / 2);
  late.hold('b', b.wait);
  late.drop(linkA);
  expect(a.seen).toEqual(['err timed out']);
  expect(b.seen).toEqual([]);
  jest.advanceTimersByTime(LATE_ANSWER_MS / 2);
  expect(b.seen).toEqual([]);
  jest.advanceTimersByTime(LATE_ANSWER_MS / 2);
  expect(b.seen).toEqual(['err timed out']);
  expect(late.answer(linkB, done('b', 'too late'))).toBe(false);
});

test('at most 1,024 calls wait: the oldest is given up first', () => {
  const late = createLateAnswers();
  const all = Array.from({ length: 1_025 }, () => waiting(linkA));
  all.forEach((w, i) => late.hold(String(i), w.wait));
  expect(all[0]!.seen).toEqual(['err timed out']);
  expect(all[1]!.seen).toEqual([]);
  expect(late.answer(linkA, done('1024', 'ok'))).toBe(true);
  late.drop();
  expect(all[1]!.seen).toEqual(['err timed out']);
});
