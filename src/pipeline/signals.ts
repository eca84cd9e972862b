/** A signal that fires on a parent's abort or after a timeout, and the cleanup of both. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** True once the timeout, not the parent, fired. */
  timedOut(): boolean;
  /** Removes the timer and the parent listener; call when the work is done. */
  dispose(): void;
}

/** Links `parent` with a timeout of `timeoutMs` (connect-es `createLinkedAbortController`). */
export function linkSignal(parent: AbortSignal, timeoutMs: number): LinkedSignal {
  const controller = new AbortController();
  let timedOut = false;
  const onParentAbort = () => controller.abort(parent.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  if (parent.aborted) onParentAbort();
  else parent.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose() {
      clearTimeout(timer);
      parent.removeEventListener('abort', onParentAbort);
    },
  };
}

/** Rejects when `signal` aborts; the listener is removed once `work` settles. */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  work.catch(() => undefined);
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort!));
}

/** Waits `ms`, rejecting early when `signal` aborts. */
export function delay(ms: number, signal: AbortSignal): Promise<void> {
  return raceAbort(new Promise<void>((resolve) => setTimeout(resolve, ms).unref()), signal);
}
