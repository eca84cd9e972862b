import type { LoopStreak } from './store';

/** One operation recorded in a session's loop window. */
export interface WindowEntry {
  readonly op: string;
  readonly hash: string;
  readonly failed: boolean;
  /** False for a record that neither adds to its op's streak nor breaks it. @default true */
  readonly counts?: boolean;
  /** When it was recorded, in ms by the store's clock. @default 0 */
  readonly at?: number;
  /** When the wait it told the model ends, in ms by the store's clock (0: it told none). @default 0 */
  readonly until?: number;
  /** A retry's record within one call: its wait counts, but it does not add to toldRun (FinishAttempt.record.retry). */
  readonly retry?: boolean;
  /** A refusal before the call's store step (FinishAttempt.record.refused): a failure that arms no block. */
  readonly refused?: boolean;
}

/**
 * A streak as stores give it: `count` identical results, the newest recorded `at`; `until`, the
 * end of the wait the op's newest record told; `toldRun` (LoopStreak.toldRun). Ages, waits and
 * runs are given only when they say something, so that a success streak is `{ count, failed }` alone.
 * A streak of refusals (`refused`) is failed and `refused`, without an age: it arms no block.
 */
export function loopStreak(count: number, failed: boolean, at: number, until: number, now: number, toldRun = 0, refused = false): LoopStreak {
  const isFailed = failed && count > 0;
  const waitMs = until > now ? until - now : 0;
  const run = toldRun > 0 ? { toldRun } : {};
  if (!isFailed && waitMs === 0) return { count, failed: false, ...run };
  const age = !isFailed ? {} : refused ? { refused: true as const } : { sinceMs: Math.max(0, now - at) };
  return { count, failed: isFailed, ...age, ...(waitMs > 0 ? { waitMs } : {}), ...run };
}

/**
 * The streak of an operation in a window ordered oldest first, at `now`: how many of its newest
 * counted entries carry the same result, stopping at the first different result (progress);
 * entries that do not count are skipped, but the newest entry of the op, counted or not, says
 * how long the model was told to wait, and starts the run of entries that told one (toldRun; a
 * retry's entry within one call continues the run without adding to it).
 */
export function streakOf(window: readonly WindowEntry[], op: string, now = 0): LoopStreak {
  let count = 0;
  let hash: string | undefined;
  let failed = false;
  let refused = false;
  let at = 0;
  let until: number | undefined;
  let toldRun = 0;
  let runHash: string | undefined;
  let runOpen = true;
  for (let i = window.length - 1; i >= 0; i--) {
    const entry = window[i]!;
    if (entry.op !== op) continue;
    until ??= entry.until ?? 0;
    if (runOpen && (entry.until ?? 0) > 0 && (runHash ?? entry.hash) === entry.hash) {
      runHash = entry.hash;
      if (entry.retry !== true) toldRun++;
    } else runOpen = false;
    if (entry.counts === false) continue;
    if (hash === undefined) {
      hash = entry.hash;
      failed = entry.failed;
      refused = entry.refused === true;
      at = entry.at ?? 0;
    } else if (entry.hash !== hash) break;
    count++;
  }
  return loopStreak(count, failed, at, until ?? 0, now, toldRun, refused);
}
