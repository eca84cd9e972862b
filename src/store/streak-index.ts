import type { LoopStreak } from './store';
import type { WindowEntry } from './loop-window';

/** The streak of an op the window does not hold (shared: streaks are read, never changed). */
export const NO_STREAK: LoopStreak = Object.freeze({ count: 0, failed: false });

interface OpState {
  hash: string;
  failed: boolean;
  /** The newest entries of the op that carry `hash`. */
  streak: number;
  /** Entries of the op still in the window. */
  total: number;
}

/**
 * A session's loop window with each operation's streak kept up to date, so that reading and
 * recording cost O(1) instead of a scan of the window. Equivalent to `streakOf` over the last
 * `window` entries: when an op's oldest entry leaves the window, it leaves the streak too only
 * if every entry of the op is in the streak.
 */
export class StreakIndex {
  private readonly entries: WindowEntry[] = [];
  private head = 0;
  private readonly ops = new Map<string, OpState>();

  /** Entries in the window. */
  get size(): number {
    return this.entries.length - this.head;
  }

  streak(op: string): LoopStreak {
    const state = this.ops.get(op);
    return state ? { count: state.streak, failed: state.failed } : NO_STREAK;
  }

  record(entry: WindowEntry, window: number): void {
    const state = this.ops.get(entry.op);
    if (!state) this.ops.set(entry.op, { hash: entry.hash, failed: entry.failed, streak: 1, total: 1 });
    else {
      if (state.hash === entry.hash) state.streak++;
      else Object.assign(state, { hash: entry.hash, streak: 1 });
      state.failed = entry.failed;
      state.total++;
    }
    this.entries.push(entry);
    while (this.entries.length - this.head > window) this.evict(this.entries[this.head++]!);
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries.splice(0, this.head);
      this.head = 0;
    }
  }

  private evict(entry: WindowEntry): void {
    const state = this.ops.get(entry.op)!;
    if (state.streak === state.total) state.streak--;
    if (--state.total === 0) this.ops.delete(entry.op);
  }
}
