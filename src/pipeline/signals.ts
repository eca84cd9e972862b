import { setMaxListeners } from 'node:events';
import { MAX_TIMER_MS } from '../options/limits';
import { DEADLINES, type Deadline } from './deadlines';
import { abortScope, onScopeAbort, ScopeSignal } from './scope-signal';

/**
 * The abort reason of an attempt whose time ran out (runGuarded's deadline, linkSignal's timer):
 * `timeoutMs` is the time it was given, so an executor tells its tool's own timeout (timeoutMs at
 * least the tool's timeout_ms) from a client's deadline that came first, and either from a cancel.
 */
export class TimedOutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
    this.name = 'TimedOutError';
  }
}

/** A signal that fires on a parent's abort or after a timeout, and the cleanup of both. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** True once the timeout, not the parent, fired. */
  timedOut(): boolean;
  /** Removes the timer and the parent listener; call when the work is done. */
  dispose(): void;
}

/**
 * Links `parent` with a timeout of `timeoutMs` (connect-es `createLinkedAbortController`); one
 * above MAX_TIMER_MS waits that long instead (Node would fire it after 1 ms), as Deadlines.arm does.
 */
export function linkSignal(parent: AbortSignal, timeoutMs: number): LinkedSignal {
  const controller = new AbortController();
  let timedOut = false;
  const onParentAbort = () => controller.abort(parent.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new TimedOutError(timeoutMs));
  }, Math.min(timeoutMs, MAX_TIMER_MS));
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

/**
 * What the pipeline reads of a turn's cancellation: an AbortSignal satisfies it, and so does the
 * lighter signal of {@link createAbortScope}. Subscribe with {@link onAbort}; code that needs a
 * real AbortSignal (a policy endpoint's fetch, an approval wait) asks {@link toAbortSignal}.
 */
export interface TurnSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
}

/** Callbacks run once when a signal aborts, registered without an EventTarget listener each. */
interface Cancellation {
  readonly callbacks: Set<() => void>;
}

const cancellations = new WeakMap<AbortSignal, Cancellation>();

/** A real AbortSignal for `signal`, made on first request for a scope's signal. */
export function toAbortSignal(signal: TurnSignal): AbortSignal {
  if (!(signal instanceof ScopeSignal)) return signal as AbortSignal;
  if (!signal.controller) {
    const controller = new AbortController();
    // Every call of a turn may wait on it (an approval, a policy endpoint): no fixed bound.
    setMaxListeners(0, controller.signal);
    if (signal.aborted) controller.abort(signal.reason);
    signal.controller = controller;
  }
  return signal.controller.signal;
}

/**
 * Subscribes `callback` to `signal`'s abort (a signal aborted already runs it at once, on the next
 * microtask) and returns the unsubscribe. One EventTarget listener
 * per AbortSignal serves every subscriber (a Set add and delete per attempt instead of an
 * addEventListener and removeEventListener, which cost far more on the hot path); a scope's
 * signal needs none at all.
 */
export function onAbort(signal: TurnSignal, callback: () => void): () => void {
  // Aborted already, its abort will not come again: the callback runs on the next microtask
  // (after the caller has finished subscribing), unless unsubscribed first.
  if (signal.aborted) return abortedAlready(callback);
  if (signal instanceof ScopeSignal) return onScopeAbort(signal, callback);
  const target = signal as AbortSignal;
  let cancellation = cancellations.get(target);
  if (!cancellation) {
    const created: Cancellation = { callbacks: new Set() };
    cancellation = created;
    cancellations.set(target, created);
    target.addEventListener('abort', () => {
      for (const cb of created.callbacks) cb();
      created.callbacks.clear();
    }, { once: true });
  }
  const callbacks = cancellation.callbacks;
  callbacks.add(callback);
  return () => void callbacks.delete(callback);
}

function abortedAlready(callback: () => void): () => void {
  let subscribed = true;
  queueMicrotask(() => {
    if (subscribed) callback();
  });
  return () => void (subscribed = false);
}

/** How many {@link onAbort} subscribers `signal` holds (to check that none outlive their work). */
export function abortSubscribers(signal: TurnSignal): number {
  return signal instanceof ScopeSignal ? (signal.first ? 1 : 0) + (signal.callbacks?.size ?? 0) : (cancellations.get(signal as AbortSignal)?.callbacks.size ?? 0);
}

/** An abort that its owner triggers, and its signal. */
export interface AbortScope {
  readonly signal: TurnSignal;
  abort(reason?: unknown): void;
}

/**
 * An abort for one RPC whose `onAbort` subscribers are run by `abort()` itself, and whose
 * AbortSignal exists only if {@link toAbortSignal} asks for it: most Dispatches never need one.
 */
export function createAbortScope(): AbortScope {
  const signal = new ScopeSignal();
  return { signal, abort: (reason) => abortScope(signal, reason) };
}

/** `work`'s value, or undefined once `signal` has aborted first (its listener removed either way). */
export async function unlessAborted<T>(work: Promise<T>, signal: TurnSignal): Promise<T | undefined> {
  let stop = () => undefined as void;
  const aborted = new Promise<undefined>((resolve) => (stop = onAbort(signal, () => resolve(undefined))));
  try {
    return await Promise.race([work, aborted]);
  } finally {
    stop();
  }
}

/**
 * Waits `ms`, rejecting with the signal's reason as soon as `signal` (or `also`, when given)
 * aborts; the timer is cleared and both subscriptions removed either way.
 */
export function delay(ms: number, signal: TurnSignal, also?: TurnSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  if (also?.aborted) return Promise.reject(also.reason);
  return new Promise((resolve, reject) => {
    const stop = (reason: unknown) => {
      clearTimeout(timer);
      unsubscribe();
      unsubscribeAlso?.();
      reject(reason);
    };
    const unsubscribe = onAbort(signal, () => stop(signal.reason));
    const unsubscribeAlso = also && onAbort(also, () => stop(also.reason));
    const timer = setTimeout(() => {
      unsubscribe();
      unsubscribeAlso?.();
      resolve();
    }, ms);
  });
}

/** How a guarded run ended. */
export type GuardedOutcome<T> =
  | { readonly kind: 'done'; readonly value: T }
  /** `work`: the work's own promise, which may still settle (see ExecutorContext.lateAnswerPending). */
  | { readonly kind: 'timeout'; readonly work?: Promise<T> }
  /**
   * `lingering`: the work goes on past the cancel (see {@link Linger}), and this is how it ends.
   * `work`, as a timeout's: the work's own promise, cut off, which may still settle.
   */
  | { readonly kind: 'cancelled'; readonly lingering?: Promise<GuardedOutcome<T>>; readonly work?: Promise<T> }
  | { readonly kind: 'failed'; readonly error: unknown };

/**
 * A guarded run's work that may outlive its parent's abort: asked at that abort, `when` says
 * whether the work goes on, its signal not aborted, to its own end or its timeout; the caller is
 * told `cancelled` at once, with the run's end to come (`lingering`). `until` ends it at once, as
 * a cancel (dispatchd's hard stop).
 */
export interface Linger {
  readonly when: () => boolean;
  readonly until?: TurnSignal;
}

/** Where a guarded run's work learns of its abort: a listener, or an AbortSignal made on request. */
export interface SignalSource extends AbortHook {
  signal(): AbortSignal;
}

/** A subscription to an abort without an AbortSignal: `listener` runs once with the reason. */
export interface AbortHook {
  /** Runs `listener` once when the work is aborted (at once if it already was); returns the unsubscribe. */
  onAbort(listener: (reason: unknown) => void): () => void;
}

/** Runs `listener` with `signal`'s reason once it aborts, at once if it has; returns the unsubscribe. */
function listenForAbort(signal: TurnSignal, listener: (reason: unknown) => void): () => void {
  if (signal.aborted) {
    listener(signal.reason);
    return () => undefined;
  }
  return onAbort(signal, () => listener(signal.reason));
}

/** A signal as an {@link AbortHook} (one shared EventTarget listener, see {@link onAbort}). */
export function abortHookOf(signal: TurnSignal): AbortHook {
  return { onAbort: (listener) => listenForAbort(signal, listener) };
}

/**
 * One guarded run: the deadline entry, the signal source (an abort scope's signal, whose
 * AbortSignal is made on request) and the settling, in one object (a closure each measured as a
 * good part of an attempt's allocations).
 */
class GuardedRun<T> implements Deadline, SignalSource {
  at = 0;
  slot = -1;
  private readonly scope = new ScopeSignal();
  private settled = false;
  private unsubscribe: (() => void) | undefined;
  private work: Promise<T> | undefined;

  constructor(
    private readonly parent: TurnSignal,
    private readonly timeoutMs: number,
    /** Where the run's end goes: the caller, or once the work outlives its parent's abort, the lingering promise. */
    private resolve: (outcome: GuardedOutcome<T>) => void,
    private readonly linger?: Linger,
  ) {}

  start(work: (source: SignalSource) => Promise<T>): void {
    if (this.parent.aborted) return this.settle({ kind: 'cancelled' }, this.parent.reason ?? new Error('cancelled'));
    DEADLINES.schedule(this, this.timeoutMs);
    this.unsubscribe = onAbort(this.parent, () => this.cancel());
    try {
      (this.work = work(this)).then(
        (value) => this.settle({ kind: 'done', value }),
        (error: unknown) => this.settle({ kind: 'failed', error }),
      );
    } catch (error) {
      this.settle({ kind: 'failed', error });
    }
  }

  signal(): AbortSignal {
    return toAbortSignal(this.scope);
  }

  onAbort(listener: (reason: unknown) => void): () => void {
    return listenForAbort(this.scope, listener);
  }

  /** The deadline passed. */
  fire(): void {
    this.settle({ kind: 'timeout', work: this.work }, new TimedOutError(this.timeoutMs));
  }

  private cancel(): void {
    const linger = this.linger;
    if (this.settled || linger === undefined || !linger.when()) return this.settle({ kind: 'cancelled', work: this.work }, this.parent.reason ?? new Error('cancelled'));
    this.unsubscribe?.();
    const told = this.resolve;
    const lingering = new Promise<GuardedOutcome<T>>((resolve) => (this.resolve = resolve));
    const until = linger.until;
    this.unsubscribe = until && listenForAbort(until, (reason) => this.settle({ kind: 'cancelled' }, reason ?? new Error('cancelled')));
    told({ kind: 'cancelled', lingering });
  }

  private settle(outcome: GuardedOutcome<T>, reason?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    DEADLINES.cancel(this);
    this.unsubscribe?.();
    if (reason !== undefined) abortScope(this.scope, reason);
    this.resolve(outcome);
  }
}

/**
 * Runs `work` under a timeout, raced against `parent`, and settles at the first of the three
 * (a tool that ignores its signal cannot hold the call); with `linger`, the work may go on past
 * `parent`'s abort (see {@link Linger}). The signal handed to `work` is created
 * only when asked for, so a tool that never looks at it costs no AbortController; once created,
 * it aborts on the timeout or the parent's abort. The deadline and listener are always cleaned up.
 */
export function runGuarded<T>(parent: TurnSignal, timeoutMs: number, work: (source: SignalSource) => Promise<T>, linger?: Linger): Promise<GuardedOutcome<T>> {
  return new Promise((resolve) => new GuardedRun<T>(parent, timeoutMs, resolve, linger).start(work));
}
