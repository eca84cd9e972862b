import type { LoopStreak } from './store';
import { loopStreak, type WindowEntry } from './loop-window';

/** The streak of an op the window does not hold (shared: streaks are read, never changed). */
export const NO_STREAK: LoopStreak = Object.freeze({ count: 0, failed: false });

interface OpState {
  /** The op, so that its last entry leaving the window deletes it without a look-up. */
  readonly op: string;
  hash: string;
  failed: boolean;
  /** The streak's failures are refusals (LoopStreak.refused). */
  refused: boolean;
  /** The newest counted entries of the op that carry `hash`. */
  streak: number;
  /** Counted entries of the op still in the window. */
  counted: number;
  /** Entries of the op still in the window, counted or not. */
  total: number;
  /** When the newest counted entry was recorded. */
  at: number;
  /** When the wait the newest entry told ends (0: none). */
  until: number;
  /** The newest entries of the op in a row that told a wait and carry `runHash`. */
  runEntries: number;
  /** Those of them that are no retry's within one call (LoopStreak.toldRun). */
  toldRun: number;
  runHash: string;
}

/** What eviction needs of an entry besides its op: whether it counted, and whether it was a retry's. */
const COUNTED = 1;
const RETRY = 2;

/**
 * A session's loop window with each operation's streak kept up to date, so that reading and
 * recording cost O(1) instead of a scan of the window. Equivalent to `streakOf` over the last
 * `window` entries: when an op's oldest counted entry leaves the window, it leaves the streak too
 * only if every counted entry of the op is in the streak. The window keeps, per entry, its op's
 * state and two flags, not the entry itself: an entry's hash and times matter only while it is
 * its op's newest, which the state holds (so a call keeps one object alive here, not two).
 */
export class StreakIndex {
  /** Each entry's op state, oldest first from `head`. */
  private readonly states: OpState[] = [];
  /** Each entry's COUNTED and RETRY flags, alongside `states`. */
  private readonly flags: number[] = [];
  private head = 0;
  private readonly ops = new Map<string, OpState>();

  /** Entries in the window. */
  get size(): number {
    return this.states.length - this.head;
  }

  streak(op: string, now: number): LoopStreak {
    const state = this.ops.get(op);
    if (!state) return NO_STREAK;
    // As loopStreak gives it when nothing but the count says something (no failure, wait or run).
    if (state.until <= now && state.toldRun <= 0 && !(state.failed && state.streak > 0)) return { count: state.streak, failed: false };
    return loopStreak(state.streak, state.failed, state.at, state.until, now, state.toldRun, state.refused);
  }

  /** Records `entry` as the newest, then evicts the oldest past `window` entries. */
  record(entry: WindowEntry, window: number): void {
    this.add(entry.op, entry.hash, entry.failed, entry.counts !== false, entry.at ?? 0, entry.until ?? 0, entry.retry === true, window, entry.refused === true);
  }

  /** {@link record} of an entry given by its fields (no WindowEntry made for it); `refused`: WindowEntry.refused. */
  add(op: string, hash: string, failed: boolean, counts: boolean, at: number, until: number, retry: boolean, window: number, refused = false): void {
    let state = this.ops.get(op);
    if (!state) this.ops.set(op, (state = { op, hash, failed, refused, streak: 0, counted: 0, total: 0, at: 0, until: 0, runEntries: 0, toldRun: 0, runHash: '' }));
    if (counts) {
      if (state.streak > 0 && state.hash === hash) state.streak++;
      else {
        state.hash = hash;
        state.streak = 1;
      }
      state.failed = failed;
      state.refused = refused;
      state.at = at;
      state.counted++;
    }
    state.until = until;
    const told = retry ? 0 : 1;
    if (until === 0) {
      state.runEntries = 0;
      state.toldRun = 0;
    } else if (state.runEntries > 0 && state.runHash === hash) {
      state.runEntries++;
      state.toldRun += told;
    } else {
      state.runHash = hash;
      state.runEntries = 1;
      state.toldRun = told;
    }
    state.total++;
    this.states.push(state);
    this.flags.push((counts ? COUNTED : 0) | (retry ? RETRY : 0));
    while (this.states.length - this.head > window) {
      this.evict(this.states[this.head]!, this.flags[this.head]!);
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.states.length) {
      this.states.splice(0, this.head);
      this.flags.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Takes the oldest entry, of `state`'s op, out of the window (every entry's op state is the one its op maps to). */
  private evict(state: OpState, flags: number): void {
    if ((flags & COUNTED) !== 0) {
      if (state.streak === state.counted) state.streak--;
      state.counted--;
    }
    if (state.runEntries === state.total) {
      state.runEntries--;
      if ((flags & RETRY) === 0) state.toldRun--;
    }
    if (--state.total === 0) this.ops.delete(state.op);
  }
}
