import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import type { CallObserver } from '../pipeline';

/**
 * A call's observer and the work running for it, so the observer is ended exactly once: with the
 * result when its wave succeeds, or with the hard error's reason once the work has settled (a
 * sibling aborted by that error may still be unwinding when the RPC ends).
 */
export interface CallTracker {
  readonly observer: CallObserver;
  started(work: Promise<unknown>): void;
  succeed(result: ToolResult): void;
  /** Ends the observer with `reason` once the call's work has settled; resolves then. */
  fail(reason: string): Promise<void>;
}

const SETTLED = Promise.resolve();

/** One call's tracker: its methods on the prototype, not four closures per call. */
class Tracker implements CallTracker {
  private work: Promise<unknown> | undefined;
  private ended = false;

  constructor(readonly observer: CallObserver) {}

  started(promise: Promise<unknown>): void {
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
    const end = () => this.observer.end(undefined, reason);
    if (this.work) return this.work.then(end, end);
    end();
    return SETTLED;
  }
}

/** Tracks one call observed by `observer` (CALL_RECEIVED has already fired). */
export function trackCall(observer: CallObserver): CallTracker {
  return new Tracker(observer);
}
