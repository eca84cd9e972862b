import { checkInteger } from '../options';

/** Options of parallel dispatch. */
export interface WaveOptions {
  /** Calls run at once inside a wave when a request's `max_concurrency` is 0. @default 8 */
  readonly defaultMaxConcurrency?: number;
}

/** {@link WaveOptions} with every default filled in. */
export interface ResolvedWaveOptions {
  readonly defaultMaxConcurrency: number;
}

/** The default of `max_concurrency` (DESIGN section 2: 0 means 8). */
export const DEFAULT_MAX_CONCURRENCY = 8;

/** Fills unset options with their defaults; rejects a bound that is not a positive integer. */
export function resolveWaveOptions(partial: WaveOptions = {}): ResolvedWaveOptions {
  return { defaultMaxConcurrency: checkInteger('defaultMaxConcurrency', partial.defaultMaxConcurrency ?? DEFAULT_MAX_CONCURRENCY) };
}
