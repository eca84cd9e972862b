import { HardError } from '../errors';
import { createAbortScope, onAbort, type TurnSignal } from './signals';

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

/** A signal a wait listens to, and the end of that listening. */
export interface WaitSignal {
  readonly signal: TurnSignal;
  /** Stops following the turn's signals; call once the wait is over. */
  stop(): void;
}

const NOT_LISTENING = (): void => undefined;

/**
 * What a wait before a tool runs (an approval, a concurrency slot, a rate turn) ends on: the
 * turn's signal and, with a shared store, dispatchd's drain (`draining`): nothing has run yet, so
 * the attempt ends at once, SHUTTING_DOWN (see {@link waitError} and {@link checkMayStart}), and
 * the client retries the turn elsewhere instead of its wait being cut off at the grace period's
 * end. Without `draining`, the turn's own signal (nothing is made).
 */
export function waitSignal(turn: { readonly signal: TurnSignal; readonly draining?: TurnSignal }): WaitSignal {
  const { signal, draining } = turn;
  if (!draining) return { signal, stop: NOT_LISTENING };
  const scope = createAbortScope();
  if (signal.aborted || draining.aborted) {
    scope.abort(signal.aborted ? signal.reason : draining.reason);
    return { signal: scope.signal, stop: NOT_LISTENING };
  }
  const stopTurn = onAbort(signal, () => scope.abort(signal.reason));
  const stopDrain = onAbort(draining, () => scope.abort(draining.reason));
  return {
    signal: scope.signal,
    stop() {
      stopTurn();
      stopDrain();
    },
  };
}

/** The error a wait under {@link waitSignal} ended with, as the turn tells it: SHUTTING_DOWN for the drain's. */
export function waitError(turn: { readonly signal: TurnSignal; readonly draining?: TurnSignal }, error: unknown): unknown {
  const drained = error instanceof HardError && error.reason === 'CANCELLED' && !turn.signal.aborted && turn.draining?.aborted === true;
  return drained ? HardError.shuttingDown() : error;
}
