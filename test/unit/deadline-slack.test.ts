import { HardError } from '../../src/errors';
import { cancelledByDeadline, deadlineSlack, turnError, DEADLINE_SLACK_MS, MAX_DEADLINE_SLACK_MS } from '../../src/pipeline';

// A client's cancel at its own deadline reaches dispatchd before dispatchd's deadline by the time
// the request took to arrive: under load more than a fixed 50 ms for 2.5 s deadlines, and the
// turn said CANCELLED. The slack is 5% of the turn's own timeout, 50 ms at least, 250 ms at most.

const received = 1_000_000;

test('the slack is 50 ms for short turns and 5% of the timeout for longer ones, at most 250 ms', () => {
  expect(deadlineSlack(received + 200, received)).toBe(DEADLINE_SLACK_MS);
  expect(deadlineSlack(received + 1000, received)).toBe(50);
  expect(deadlineSlack(received + 2500, received)).toBe(125);
  expect(deadlineSlack(received + 5000, received)).toBe(250);
  // A real cancel 3 s before a minute's deadline, or 3 minutes before an hour's, is the client's.
  expect(deadlineSlack(received + 60_000, received)).toBe(MAX_DEADLINE_SLACK_MS);
  expect(deadlineSlack(received + 3_600_000, received)).toBe(250);
});

test('without a receive time or a deadline the slack is the fixed 50 ms', () => {
  expect(deadlineSlack(received + 60_000)).toBe(50);
  expect(deadlineSlack(Infinity, received)).toBe(50);
});

test('a cancel 100 ms before a 2.5 s deadline is the deadline, one 200 ms before is the client', () => {
  const deadline = received + 2500;
  expect(cancelledByDeadline(deadline - 100, deadline, received)).toBe(true);
  expect(cancelledByDeadline(deadline - 125, deadline, received)).toBe(true);
  expect(cancelledByDeadline(deadline - 126, deadline, received)).toBe(false);
  expect(cancelledByDeadline(deadline - 200, deadline, received)).toBe(false);
  // The fixed slack alone, as before: 100 ms early was the client's.
  expect(cancelledByDeadline(deadline - 100, deadline)).toBe(false);
});

test('a turn with no deadline is never cancelled by it', () => {
  expect(cancelledByDeadline(received, Infinity, received)).toBe(false);
});

test('turnError names a cancel within the turn-relative slack DEADLINE_EXCEEDED', () => {
  const start = Date.now();
  // A 2.5 s turn received 2.4 s ago: 100 ms before its deadline, within its 125 ms slack.
  const late = turnError(HardError.cancelled(), start + 100, undefined, start - 2400) as HardError;
  expect(late.reason).toBe('DEADLINE_EXCEEDED');
  // A 10 s turn received now: 10 s before its deadline, the client's cancel.
  const early = turnError(HardError.cancelled(), start + 10_000, undefined, start) as HardError;
  expect(early.reason).toBe('CANCELLED');
});
