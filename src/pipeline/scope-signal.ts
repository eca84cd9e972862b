import type { TurnSignal } from './signals';

// The light signal of an abort scope (signals.ts, createAbortScope): a flag, a reason and its
// subscribers, without an EventTarget.

/**
 * The signal of an {@link AbortScope}: a flag, a reason and its subscribers. The AbortSignal
 * behind it is made only if someone asks for one; creating an AbortController for every RPC
 * measured ~3% of the server's CPU per Dispatch.
 */
export class ScopeSignal implements TurnSignal {
  aborted = false;
  reason: unknown = undefined;
  /** The first subscriber: a turn's scope has one at a time (a Set per turn measured ~270 bytes a call). */
  first: (() => void) | undefined;
  /** Made on a subscription while `first` is held: most scopes never get one. */
  callbacks: Set<() => void> | undefined;
  controller: AbortController | undefined;
}

/** Aborts a scope's signal: its AbortSignal if one was made, then its subscribers, once. */
export function abortScope(signal: ScopeSignal, reason: unknown): void {
  if (signal.aborted) return;
  signal.aborted = true;
  signal.reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
  signal.controller?.abort(signal.reason);
  const { first, callbacks } = signal;
  signal.first = signal.callbacks = undefined;
  // Subscribed before any in the Set (made only while it was held): insertion order.
  first?.();
  if (callbacks) for (const cb of callbacks) cb();
}

/** onAbort on a scope's signal: in its `first` slot while that is free and no Set was made, else in the Set. */
export function onScopeAbort(signal: ScopeSignal, callback: () => void): () => void {
  if (signal.first === callback || (signal.first === undefined && signal.callbacks === undefined)) {
    signal.first = callback;
    return () => void (signal.first === callback && (signal.first = undefined));
  }
  const callbacks = (signal.callbacks ??= new Set());
  callbacks.add(callback);
  return () => void callbacks.delete(callback);
}
