import { HardError } from '../errors';
import type { TurnSignal } from './signals';

/**
 * A cancellation this close to the turn's deadline is the deadline's: {@link DEADLINE_SLACK_MS},
 * or {@link DEADLINE_SLACK_SHARE} of the turn's timeout (deadline less the time its request was
 * received) when that is more, at most {@link MAX_DEADLINE_SLACK_MS}. A deadline timer may fire a little early (DEADLINES), and the
 * client's own deadline passes before the server's by the time its request took to arrive and be
 * read: its cancellation (RST_STREAM) then comes first, 9 ms before the server's deadline in a test
 * on a loaded 2-core machine, and more than 50 ms before it for 2 of 87 turns of 2.5 s under a
 * rolling restart's load, and the calls it cut short said CANCELLED. A client that really cancels
 * this close to its deadline is counted as timed out.
 */
export const DEADLINE_SLACK_MS = 50;

/** The share of a turn's timeout that {@link deadlineSlack} allows, when over {@link DEADLINE_SLACK_MS}. */
export const DEADLINE_SLACK_SHARE = 0.05;

/**
 * The most {@link deadlineSlack} allows, whatever the timeout: 5% of a 60 s turn would be 3 s, of
 * an hour's (an approval wait) 3 minutes, and a client's real cancel that long before its deadline
 * would be counted as timed out.
 */
export const MAX_DEADLINE_SLACK_MS = 250;

/**
 * How long before `deadline` (epoch ms) a cancellation is the deadline's, for a request received at
 * `received` (epoch ms; the fixed slack alone when unknown).
 */
export function deadlineSlack(deadline: number, received?: number): number {
  if (received === undefined || !Number.isFinite(deadline)) return DEADLINE_SLACK_MS;
  return Math.max(DEADLINE_SLACK_MS, Math.min(MAX_DEADLINE_SLACK_MS, (deadline - received) * DEADLINE_SLACK_SHARE));
}

/** Whether a cancellation at `now` (epoch ms) is the deadline's (see {@link deadlineSlack}). */
export function cancelledByDeadline(now: number, deadline: number, received?: number): boolean {
  return now + deadlineSlack(deadline, received) >= deadline;
}

/** Errors {@link turnError} has answered for, so a later look at one decides nothing again. */
const decided = new WeakSet<object>();

/**
 * The hard error a turn ends with: a cancellation within {@link deadlineSlack} of the turn's
 * `deadline` (epoch ms; its request `received` then) is the deadline's (DEADLINE_EXCEEDED), one
 * once `shutdown` has fired is shutdown's (UNAVAILABLE SHUTTING_DOWN: clients retry it; so is the
 * SHUTTING_DOWN a draining turn ends with, which is no cancellation), anything else stays. The
 * calls the error ended and the turn itself are told the same reason: the first look decides, and
 * an error it returned is returned unchanged (the clock may cross the slack between two looks).
 * Runs on the error path alone.
 */
export function turnError(error: unknown, deadline: number, shutdown?: TurnSignal, received?: number): unknown {
  if (!(error instanceof HardError) || error.reason !== 'CANCELLED' || decided.has(error)) return error;
  const byDeadline = cancelledByDeadline(Date.now(), deadline, received);
  if (!byDeadline && !shutdown?.aborted) {
    decided.add(error);
    return error;
  }
  const hard = byDeadline ? HardError.deadline() : HardError.shuttingDown();
  hard.unwound = error.unwound;
  decided.add(hard);
  return hard;
}

/**
 * Throws when a turn may start no more work (a call, a wave, an attempt): CANCELLED once its
 * signal aborted, SHUTTING_DOWN once dispatchd drains (`draining`, set with a shared store).
 */
export function checkMayStart(turn: { readonly signal: TurnSignal; readonly draining?: TurnSignal }): void {
  if (turn.signal.aborted) throw HardError.cancelled();
  if (turn.draining?.aborted) throw HardError.shuttingDown();
}
