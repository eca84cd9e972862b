import type { LoopStreak } from './store';

/** One operation recorded in a session's loop window. */
export interface WindowEntry {
  readonly op: string;
  readonly hash: string;
  readonly failed: boolean;
}

/**
 * The streak of an operation in a window ordered oldest first: how many of its newest entries
 * carry the same result, stopping at the first different result (progress).
 */
export function streakOf(window: readonly WindowEntry[], op: string): LoopStreak {
  let count = 0;
  let hash: string | undefined;
  let failed = false;
  for (let i = window.length - 1; i >= 0; i--) {
    const entry = window[i]!;
    if (entry.op !== op) continue;
    if (hash === undefined) {
      hash = entry.hash;
      failed = entry.failed;
    } else if (entry.hash !== hash) break;
    count++;
  }
  return { count, failed };
}
