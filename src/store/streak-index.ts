import type { LoopStreak } from './store';
import { loopStreak, type WindowEntry } from './loop-window';

/** The streak of an op the window does not hold (shared: streaks are read, never changed). */
export const NO_STREAK: LoopStreak = Object.freeze({ count: 0, failed: false });

interface OpState {
  hash: string;
  failed: boolean;
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

/**
 * A session's loop window with each operation's streak kept up to date, so that reading and
 * recording cost O(1) instead of a scan of the window. Equivalent to `streakOf` over the last
 * `window` entries: when an op's oldest counted entry leaves the window, it leaves the streak too
 * only if every counted entry of the op is in the streak.
 */
export class StreakIndex {
  private readonly entries: WindowEntry[] = [];
  private head = 0;
  private readonly ops = new Map<string, OpState>();

  /** Entries in the window. */
  get size(): number {
    return this.entries.length - this.head;
  }

  streak(op: string, now: number): LoopStreak {
    const state = this.ops.get(op);
    return state ? loopStreak(state.streak, state.failed, state.at, state.until, now, state.toldRun) : NO_STREAK;
  }

  record(entry: WindowEntry, window: number): void {
    let state = this.ops.get(entry.op);
    if (!state) this.ops.set(entry.op, (state = { hash: entry.hash, failed: entry.failed, streak: 0, counted: 0, total: 0, at: 0, until: 0, runEntries: 0, toldRun: 0, runHash: '' }));
    if (entry.counts !== false) {
      if (state.streak > 0 && state.hash === entry.hash) state.streak++;
      else Object.assign(state, { hash: entry.hash, streak: 1 });
      state.failed = entry.failed;
      state.at = entry.at ?? 0;
      state.counted++;
    }
    state.until = entry.until ?? 0;
    const told = entry.retry === true ? 0 : 1;
    if (state.until === 0) Object.assign(state, { runEntries: 0, toldRun: 0 });
    else if (state.runEntries > 0 && state.runHash === entry.hash) {
      state.runEntries++;
      state.toldRun += told;
    } else Object.assign(state, { runHash: entry.hash, runEntries: 1, toldRun: told });
    state.total++;
    this.entries.push(entry);
    while (this.entries.length - this.head > window) this.evict(this.entries[this.head++]!);
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries.splice(0, this.head);
      this.head = 0;
    }
  }

  private evict(entry: WindowEntry): void {
    const state = this.ops.get(entry.op)!;
    if (entry.counts !== false) {
      if (state.streak === state.counted) state.streak--;
      state.counted--;
    }
    if (state.runEntries === state.total) {
      state.runEntries--;
      if (entry.retry !== true) state.toldRun--;
    }
    if (--state.total === 0) this.ops.delete(entry.op);
  }
}
