import type { Logger } from '../log';
import type { SessionScope } from './store';

/** Told of a session that ended (EndSession), to drop what is kept of it beside the store. */
export type SessionEndListener = (scope: SessionScope) => void;

/** The session-end listeners of a store. */
export interface SessionEndListeners {
  add(listener: SessionEndListener): void;
  /** Calls every listener in turn; one that throws is logged, and the others still run. */
  notify(scope: SessionScope): void;
}

/** Creates a store's session-end listeners, logging their failures to `logger` when given. */
export function createSessionEndListeners(logger?: Logger): SessionEndListeners {
  const listeners: SessionEndListener[] = [];
  return {
    add: (listener) => void listeners.push(listener),
    notify(scope) {
      for (const listener of listeners) {
        try {
          listener(scope);
        } catch (error) {
          logger?.warn('a session end listener failed', { error: error instanceof Error ? error.message : String(error) });
        }
      }
    },
  };
}
