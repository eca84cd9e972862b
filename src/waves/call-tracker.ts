import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { HardError } from '../errors';
import type { CallObserver } from '../pipeline';

/**
 * A call's observer and the work running for it, so the observer is ended exactly once: with the
 * result when its wave succeeds, or, when the turn ends with a hard error, with what happened to
 * the call once its work has settled (a sibling aborted by that error may still be unwinding when
 * the RPC ends): see {@link CallTracker.fail}.
 */
export interface CallTracker {
  readonly observer: CallObserver;
  /** Its result once its work finished, in a wave a hard error ended too: the turn's ErrorInfo names it (HardError.withCompleted). */
  finished?: ToolResult;
  started(work: Promise<ToolResult>): void;
  succeed(result: ToolResult): void;
  /**
   * Ends the observer once the call's work has settled, the turn having ended with the hard error
   * `reason`; resolves then. The RPC's answer is the hard error whatever this says: it is what the
   * call's span, metrics and stats record. A call that finished keeps its result (the turn discards
   * it, but it ran: a side effect happened). A call that did not finish, or never started, ends
   * with `reason` when that is the whole turn's (the client's cancel, the deadline, shutdown);
   * else with its own hard error when it raised it (LOOP_DETECTED, RECOVERY_EXHAUSTED), and as
   * CANCELLED when another call's hard error aborted it or kept it from starting.
   */
  fail(reason: string): Promise<void>;
}

const SETTLED = Promise.resolve();

/** Hard errors that end every call of a turn alike, rather than coming from one call. */
const TURN_WIDE = new Set<string>(['CANCELLED', 'DEADLINE_EXCEEDED', 'SHUTTING_DOWN']);

/** How a call that did not finish ends when its turn ended with `reason`; `error` is its own failure, undefined if it never started. */
function unfinishedOutcome(reason: string, error: unknown): string {
  if (TURN_WIDE.has(reason)) return reason;
  if (error === undefined) return 'CANCELLED';
  // A sibling the hard error aborted ends CANCELLED; a crash (INTERNAL) is no HardError.
  if (!(error instanceof HardError)) return reason;
  return TURN_WIDE.has(error.reason) ? 'CANCELLED' : error.reason;
}

/** One call's tracker: its methods on the prototype, not four closures per call. */
class Tracker implements CallTracker {
  finished: ToolResult | undefined = undefined;
  private work: Promise<ToolResult> | undefined;
  private ended = false;

  constructor(readonly observer: CallObserver) {}

  started(promise: Promise<ToolResult>): void {
    this.work = promise;
  }

  succeed(result: ToolResult): void {
    if (this.ended) return;
    this.ended = true;
    this.observer.end(result);
  }

  fail(reason: string): Promise<void> {
    if (this.ended) return SETTLED;
    this.ended = true;
    if (this.work) {
      return this.work.then(
        (result) => this.observer.end(result),
        (error: unknown) => this.observer.end(undefined, unfinishedOutcome(reason, error)),
      );
    }
    this.observer.end(undefined, unfinishedOutcome(reason, undefined));
    return SETTLED;
  }
}

/** Tracks one call observed by `observer` (CALL_RECEIVED has already fired). */
export function trackCall(observer: CallObserver): CallTracker {
  return new Tracker(observer);
}
