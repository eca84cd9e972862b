import type { SessionScope } from './store';

/**
 * When each turn began its first attempt, as a number that orders the store's steps (Redis's TIME
 * in microseconds; the memory store's count of its steps, which never ties), keyed by
 * the scope object the turn's steps share (TurnContext.scope: one per Dispatch, passed to every
 * beginAttempt and finishAttempt of the turn, its late answers and the spills that fit its
 * response). A finish compares it with its session's end mark (EndSession): a turn that began an
 * attempt before the end writes nothing of the session's but its idempotency records. The turn's
 * earliest begin stands for each of its attempts: never later than the attempt's own, so an attempt
 * that began before the end is never taken for a later one (one of the same turn begun after the
 * end writes nothing either). A new turn (a session id used again after its end) has a scope of its own.
 */
export interface TurnBegins {
  /** Notes that an attempt of `scope`'s turn began at `at`. */
  began(scope: SessionScope, at: number): void;
  /** When `scope`'s turn began its first attempt; undefined when it began none (a finish alone: taken as beginning now). */
  of(scope: SessionScope): number | undefined;
}

export function createTurnBegins(): TurnBegins {
  // Weak: a turn's entry goes with its scope object.
  const begun = new WeakMap<SessionScope, number>();
  // A turn's steps come in runs: the last scope is answered without a WeakMap look-up.
  let lastScope: SessionScope | undefined;
  let lastAt = 0;
  return {
    began(scope, at) {
      if (scope === lastScope && lastAt <= at) return;
      const seen = begun.get(scope);
      if (seen !== undefined && seen <= at) {
        lastScope = scope;
        lastAt = seen;
        return;
      }
      begun.set(scope, at);
      lastScope = scope;
      lastAt = at;
    },
    of(scope) {
      return scope === lastScope ? lastAt : begun.get(scope);
    },
  };
}
