import type { ResolvedTool } from '../../src/registry';
import { RETRY_MIN_RUN_MS, retryRefusal } from '../../src/pipeline/retry-room';

// The room a retry needs before the request's deadline (src/pipeline/retry-room.ts): the
// deadline's slack, plus, read-only, as long as its tool ran in the failed attempt and at least
// RETRY_MIN_RUN_MS (the timeout at most); side-effecting, the whole timeout. Times fixed: no clock read.

const tool = (readOnly: boolean, timeoutMs = 8_000) => ({ readOnly, timeoutMs }) as ResolvedTool;
const now = 1_000_000;
// A 4 s request: its slack is 5% of it, 200 ms.
const turn = (leftMs: number) => ({ deadline: now + leftMs, received: now + leftMs - 4_000 });

test('no deadline: always retried', () => {
  expect(retryRefusal(tool(false), { deadline: Infinity }, 10_000, 5_000, now)).toBeUndefined();
});

test('a backoff past the deadline keeps its message', () => {
  expect(retryRefusal(tool(true), turn(1_000), 1_000, 10, now)).toBe("not retried: waiting 1000 ms to retry would pass the request's deadline");
});

test('read-only: its tool ran 800 ms in the failed attempt, so 800 ms and the slack are needed', () => {
  expect(retryRefusal(tool(true), turn(1_500 + 1_000), 1_500, 800, now)).toBeUndefined();
  expect(retryRefusal(tool(true), turn(1_500 + 999), 1_500, 800, now)).toBe(
    `not retried: after waiting 1500 ms to retry, 999 ms would be left before the request's deadline; a retry needs 1000 ms (as long as the tool ran in the failed attempt, at least ${RETRY_MIN_RUN_MS} ms, and time to answer)`,
  );
});

test('read-only: a fast failure needs only the small floor, not a share of the timeout; a slow one no more than the timeout', () => {
  expect(RETRY_MIN_RUN_MS).toBe(100);
  // The default timeout (30 s): a tenth of it, 3 s, was needed before, whatever the failure took.
  expect(retryRefusal(tool(true, 30_000), turn(50 + 300), 50, 5, now)).toBeUndefined();
  expect(retryRefusal(tool(true, 30_000), turn(50 + 299), 50, 5, now)).toMatch(/a retry needs 300 ms \(as long as the tool ran/);
  expect(retryRefusal(tool(true, 1_000), turn(100 + 1_200), 100, 60_000, now)).toBeUndefined();
  expect(retryRefusal(tool(true, 50), turn(10 + 250), 10, 5, now)).toBeUndefined();
});

test('read-only: a failure before its tool ran (no run time) needs the floor', () => {
  expect(retryRefusal(tool(true), turn(100 + 300), 100, undefined, now)).toBeUndefined();
  expect(retryRefusal(tool(true), turn(100 + 299), 100, undefined, now)).toMatch(/a retry needs 300 ms/);
});

test("side-effecting: the tool's whole timeout and the slack are needed, however fast the failure", () => {
  // A 20 s request: its slack is 250 ms (the most).
  const long = (leftMs: number) => ({ deadline: now + leftMs, received: now + leftMs - 20_000 });
  expect(retryRefusal(tool(false), long(1_000 + 8_249), 1_000, 1, now)).toBe(
    "not retried: after waiting 1000 ms to retry, 8249 ms would be left before the request's deadline; a retry needs 8250 ms (the tool's whole timeout: a side-effecting retry cut short could not say whether it took effect, and time to answer)",
  );
  expect(retryRefusal(tool(false), long(1_000 + 8_250), 1_000, undefined, now)).toBeUndefined();
});

test("side-effecting: a timeout longer than the whole request's is never retried under it, and the warning says so", () => {
  expect(retryRefusal(tool(false), turn(1_000 + 8_199), 1_000, 100, now)).toMatch(/a retry needs 8200 ms \(the tool's whole timeout.*; its timeout_ms \(8000\) is longer than the request's, so it is never retried under it, and time to answer\)$/);
  // Its 4 s request never leaves 8.2 s after a backoff: even a failure at once with no backoff is refused.
  expect(retryRefusal(tool(false), turn(4_000), 0, 1, now)).toMatch(/a retry needs 8200 ms .*is longer than the request's/);
});
