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
  fail(reason: string): void;
}

/** Tracks one call observed by `observer` (CALL_RECEIVED has already fired). */
export function trackCall(observer: CallObserver): CallTracker {
  let work: Promise<unknown> | undefined;
  let ended = false;
  return {
    observer,
    started(promise) {
      work = promise;
    },
    succeed(result) {
      if (ended) return;
      ended = true;
      observer.end(result);
    },
    fail(reason) {
      if (ended) return;
      ended = true;
      const end = () => observer.end(undefined, reason);
      if (work) work.then(end, end);
      else end();
    },
  };
}
