import { evictOldest, TRIM_TO } from './evict-oldest';
import type { SessionScope } from './store';
import { createTurnBegins } from './turn-begins';

/**
 * The memory store's end marks: when each session was last ended (EndSession), kept `lifetimeMs`
 * (at least the longest a call may run) so that a call that began before the end and finishes
 * after it writes nothing of the session's back (see TurnBegins). At most `max` marks: past it the
 * oldest tenth go (ended longest ago, the least likely to have a call still running).
 */
export interface SessionEndMarks {
  /** Marks `key`'s session ended at step `order` (TurnBegins' order), at `t` (ms). */
  ended(key: string, order: number, t: number): void;
  /** Whether `key`'s session was ended after the step `begun`, as seen at `t`. */
  endedSince(key: string, begun: number, t: number): boolean;
  clear(): void;
}

interface EndMark {
  readonly order: number;
  readonly at: number;
}

export function createSessionEndMarks(max: number, lifetimeMs: number): SessionEndMarks {
  const marks = new Map<string, EndMark>();
  return {
    ended(key, order, t) {
      // Deleted first, so that the map stays in the order of the ends (the oldest first).
      marks.delete(key);
      marks.set(key, { order, at: t });
      if (marks.size > max) {
        const keep = Math.floor(max * TRIM_TO);
        evictOldest(marks, () => marks.size > keep);
      }
    },
    endedSince(key, begun, t) {
      if (marks.size === 0) return false;
      const mark = marks.get(key);
      if (mark === undefined) return false;
      if (mark.at + lifetimeMs <= t) {
        marks.delete(key);
        return false;
      }
      return mark.order > begun;
    },
    clear: () => marks.clear(),
  };
}

/** The memory store's end marks with its turns' begins (TurnBegins), ordered by a count of its steps, which never ties. */
export interface EndedTurns {
  /** Notes that an attempt of `scope`'s turn begins now. */
  began(scope: SessionScope): void;
  /** Marks `key`'s session ended now, at `t` (ms). */
  ended(key: string, t: number): void;
  /** Whether `scope`'s session (`key`) was ended after its turn began its first attempt (a turn that began none: no). */
  endedSince(scope: SessionScope, key: string, t: number): boolean;
  clear(): void;
}

export function createEndedTurns(max: number, lifetimeMs: number): EndedTurns {
  const turns = createTurnBegins();
  const marks = createSessionEndMarks(max, lifetimeMs);
  let steps = 0;
  return {
    began: (scope) => turns.began(scope, ++steps),
    ended: (key, t) => marks.ended(key, ++steps, t),
    endedSince: (scope, key, t) => marks.endedSince(key, turns.of(scope) ?? Infinity, t),
    clear: () => marks.clear(),
  };
}
