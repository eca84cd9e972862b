import type { Logger } from '../log';
import type { SessionScope } from './store';

/**
 * Told of a session that ended (EndSession), to drop what is kept of it beside the store. Work that
 * takes time (removing a directory) is returned as a promise: the store's endSession waits for it,
 * within a bound. A listener may be told twice of one end, and of an end that did not reach the
 * store: it must be idempotent.
 */
export type SessionEndListener = (scope: SessionScope) => void | Promise<void>;

/** Options of {@link createSessionEndListeners}. */
export interface SessionEndListenersOptions {
  /**
   * Longest wait for the promises the listeners return, in ms; past it `notify` resolves and their
   * work goes on. @default 1000 (the stores' timeout, Limits.storeTimeoutMs)
   */
  readonly waitMs?: number;
  /** Where a listener that fails, or outlasts `waitMs`, is reported. @default none */
  readonly logger?: Logger;
}

/** The session-end listeners of a store. */
export interface SessionEndListeners {
  add(listener: SessionEndListener): void;
  /**
   * Calls every listener in turn, then waits for the promises they returned, at most `waitMs`; one
   * that throws or rejects is logged, and the others still run. Never rejects.
   */
  notify(scope: SessionScope): Promise<void>;
}

const DONE = Promise.resolve();

/** Creates a store's session-end listeners. */
export function createSessionEndListeners(options: SessionEndListenersOptions = {}): SessionEndListeners {
  const { logger } = options;
  const waitMs = options.waitMs ?? 1000;
  if (!Number.isFinite(waitMs) || waitMs < 0) throw new RangeError(`session end listeners: waitMs must be a finite number of ms, 0 or more, got ${waitMs}`);
  const listeners: SessionEndListener[] = [];
  const failed = (error: unknown) => logger?.warn('a session end listener failed', { error: error instanceof Error ? error.message : String(error) });

  function within(work: Promise<unknown>): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        logger?.warn('session end listeners did not finish in time; their work goes on', { waitMs });
        resolve();
      }, waitMs);
      timer.unref();
      void work.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  return {
    add: (listener) => void listeners.push(listener),
    notify(scope) {
      let waits: Promise<void>[] | undefined;
      for (const listener of listeners) {
        try {
          const work = listener(scope);
          if (work) (waits ??= []).push(Promise.resolve(work).catch(failed));
        } catch (error) {
          failed(error);
        }
      }
      return waits ? within(Promise.all(waits)) : DONE;
    },
  };
}
