import { tmpdir } from 'node:os';
import type { Logger } from '../log';
import { checkInteger } from '../options/integer-option';
import { MAX_TIMER_MS } from '../options/limits';

/** Options of {@link createScratchDirs}. */
export interface ScratchDirsOptions {
  /**
   * Where this process makes its private root (`dispatch-scratch-XXXXXX`, mode 0700, removed on
   * close), and where it looks for the roots other processes left behind (a root is theirs until
   * unchanged for two of its owner's heartbeats and a minute: `stale-roots.ts`). @default the OS
   * temp dir (`$TMPDIR`, else /tmp)
   */
  readonly dir?: string;
  /**
   * A session's directory is removed once it has gone this long without use (a call asking for
   * it), as its loop window and trajectory memory expire in Redis 24 h after their last call.
   * @default 86400000 (24 h)
   */
  readonly ttlMs?: number;
  /**
   * Session directories this process keeps; one more evicts the least recently used that no
   * running call holds, and is refused (its call fails) while calls hold them all. @default 1000
   */
  readonly maxDirs?: number;
  /**
   * Time between sweeps (the first runs when the directories are created), and between the
   * heartbeats that keep this process's root from other processes' sweeps (recorded in the root).
   * @default 600000 (10 min), at most ttlMs
   */
  readonly sweepIntervalMs?: number;
  /** Directories (expired sessions' or left-behind roots) one sweep removes at most. @default 100 */
  readonly maxRemovalsPerSweep?: number;
  readonly logger?: Logger;
}

/** {@link ScratchDirsOptions} with every default filled in. */
export interface ResolvedScratchDirsOptions extends Required<Omit<ScratchDirsOptions, 'logger'>> {
  readonly logger?: Logger;
}

export const DEFAULT_SCRATCH_TTL_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_MAX_SCRATCH_DIRS = 1000;
export const DEFAULT_SCRATCH_SWEEP_INTERVAL_MS = 10 * 60 * 1000;
export const DEFAULT_SCRATCH_REMOVALS_PER_SWEEP = 100;

const positiveInteger = (name: string, value: unknown, max = Number.MAX_SAFE_INTEGER) => checkInteger(`scratch directories: ${name}`, value, { max });

/** Fills unset options with their defaults; rejects bad values. */
export function resolveScratchDirsOptions(partial: ScratchDirsOptions = {}): ResolvedScratchDirsOptions {
  const dir = partial.dir ?? tmpdir();
  if (typeof dir !== 'string' || dir === '') throw new RangeError(`scratch directories: dir must be a non-empty path, got ${JSON.stringify(dir)}`);
  const ttlMs = positiveInteger('ttlMs', partial.ttlMs ?? DEFAULT_SCRATCH_TTL_MS);
  return {
    dir,
    ttlMs,
    maxDirs: positiveInteger('maxDirs', partial.maxDirs ?? DEFAULT_MAX_SCRATCH_DIRS),
    sweepIntervalMs: positiveInteger('sweepIntervalMs', partial.sweepIntervalMs ?? Math.min(DEFAULT_SCRATCH_SWEEP_INTERVAL_MS, ttlMs), Math.min(ttlMs, MAX_TIMER_MS)),
    maxRemovalsPerSweep: positiveInteger('maxRemovalsPerSweep', partial.maxRemovalsPerSweep ?? DEFAULT_SCRATCH_REMOVALS_PER_SWEEP),
    logger: partial.logger,
  };
}
