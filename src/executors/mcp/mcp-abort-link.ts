import { abortSubscribers, onAbort } from '../../pipeline/signals';

/** A signal that follows a parent's abort until released. */
export interface AbortLink {
  readonly signal: AbortSignal;
  /** Unlinks `signal`: later aborts of the parent no longer reach it. */
  release(): void;
  /** Aborts `signal` alone (the parent is left as it is). */
  abort(reason: unknown): void;
}

/**
 * Links a fresh signal to `parent` through the pipeline's {@link onAbort}: a parent carries one
 * abort listener however many links it has in flight, and a released link leaves nothing on it,
 * so a long-lived parent shared by concurrent requests neither grows nor trips Node's
 * max-listeners warning.
 */
export function linkAbort(parent: AbortSignal): AbortLink {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release: () => undefined, abort: () => undefined };
  }
  const release = onAbort(parent, () => controller.abort(parent.reason));
  return { signal: controller.signal, release, abort: (reason) => controller.abort(reason) };
}

/** How many links to `parent` are not yet released (for checking that none outlive their work). */
export const openLinks = (parent: AbortSignal): number => abortSubscribers(parent);
