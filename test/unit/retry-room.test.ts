import type { ResolvedTool } from '../../src/registry';
import { retryRefusal } from '../../src/pipeline/retry-room';

// The room a retry needs before the request's deadline (src/pipeline/retry-room.ts): the
// deadline's slack, plus, read-only, the failed attempt's time and at least a tenth of the tool's
// timeout (the timeout at most); side-effecting, the whole timeout. Times fixed: no clock read.

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

test('read-only: the failed attempt took 800 ms, so 800 ms and the slack are needed', () => {
  expect(retryRefusal(tool(true), turn(1_500 + 1_000), 1_500, 800, now)).toBeUndefined();
  expect(retryRefusal(tool(true), turn(1_500 + 999), 1_500, 800, now)).toBe(
    "not retried: after waiting 1500 ms to retry, 999 ms would be left before the request's deadline; a retry needs 1000 ms (as long as the failed attempt took, at least a tenth of the tool's timeout, and time to answer)",
  );
});

test('read-only: a fast failure still needs a tenth of the timeout; a slow one no more than the timeout', () => {
  expect(retryRefusal(tool(true), turn(100 + 999), 100, 5, now)).toMatch(/a retry needs 1000 ms/);
  expect(retryRefusal(tool(true), turn(100 + 1_000), 100, 5, now)).toBeUndefined();
  expect(retryRefusal(tool(true, 1_000), turn(100 + 1_200), 100, 60_000, now)).toBeUndefined();
});

test("side-effecting: the tool's whole timeout and the slack are needed", () => {
  expect(retryRefusal(tool(false), turn(1_000 + 8_199), 1_000, 100, now)).toMatch(/a retry needs 8200 ms \(the tool's whole timeout/);
  expect(retryRefusal(tool(false), turn(1_000 + 8_200), 1_000, 100, now)).toBeUndefined();
});
