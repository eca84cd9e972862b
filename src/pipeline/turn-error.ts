import { HardError } from '../errors';
import type { TurnSignal } from './signals';

/**
 * A cancellation this close to the turn's deadline is the deadline's. A deadline timer may fire a
 * little early (DEADLINES), and the client's own deadline passes before the server's by the time
 * its request took to arrive and be read: its cancellation (RST_STREAM) then comes first, 9 ms
 * before the server's deadline in a test on a loaded 2-core machine, and the calls it cut short
 * said CANCELLED. A client that really cancels this close to its deadline is counted as timed out.
 */
export const DEADLINE_SLACK_MS = 50;

/** Errors {@link turnError} has answered for, so a later look at one decides nothing again. */
const decided = new WeakSet<object>();

/**
 * The hard error a turn ends with: a cancellation within {@link DEADLINE_SLACK_MS} of the turn's
 * `deadline` (epoch ms) is the deadline's (DEADLINE_EXCEEDED), one once `shutdown` has fired is
 * shutdown's (UNAVAILABLE SHUTTING_DOWN: clients retry it), anything else stays as it is. The
 * calls the error ended and the turn itself are told the same reason: the first look decides, and
 * an error it returned is returned unchanged (the clock may cross the slack between two looks).
 * Runs on the error path alone.
 */
export function turnError(error: unknown, deadline: number, shutdown?: TurnSignal): unknown {
  if (!(error instanceof HardError) || error.reason !== 'CANCELLED' || decided.has(error)) return error;
  const byDeadline = Date.now() + DEADLINE_SLACK_MS >= deadline;
  if (!byDeadline && !shutdown?.aborted) {
    decided.add(error);
    return error;
  }
  const hard = byDeadline ? HardError.deadline() : HardError.shuttingDown();
  hard.unwound = error.unwound;
  decided.add(hard);
  return hard;
}
