import { checkInteger } from '../options';

/** Bounds of the tool counts replicas share through Redis. */
export interface SharedStatsLimits {
  /** Time between flushes of the counts gathered since the last one, in ms. @default 1000 */
  readonly flushIntervalMs?: number;
  /** A tenant's shared counts expire this long after its last flush, in s. @default 604800 (7 days) */
  readonly ttlSeconds?: number;
  /**
   * How long Redis remembers the last batch a replica flushed for a tenant, in s: a batch sent
   * again within this time after a lost reply counts once, later it may count twice. @default 3600
   */
  readonly flushedTtlSeconds?: number;
  /**
   * (tenant, tool) pairs whose counts may wait for Redis; while that many wait (Redis away), calls
   * of other pairs are left out of the shared counts, with a log line. @default 10000
   */
  readonly maxPendingPairs?: number;
  /**
   * Tools a tenant's hash takes in: once it holds this many times 8 fields (one per counter), calls
   * of a tool it does not count yet are left out of the shared counts. @default 2000
   */
  readonly maxToolsPerTenant?: number;
  /** @default dispatch */
  readonly keyPrefix?: string;
}

/** {@link SharedStatsLimits} with every default filled in. */
export type ResolvedSharedStatsLimits = Required<SharedStatsLimits>;

const DEFAULTS: ResolvedSharedStatsLimits = {
  flushIntervalMs: 1000,
  ttlSeconds: 7 * 24 * 3600,
  flushedTtlSeconds: 3600,
  maxPendingPairs: 10_000,
  maxToolsPerTenant: 2_000,
  keyPrefix: 'dispatch',
};

const RANGES: Readonly<Record<Exclude<keyof SharedStatsLimits, 'keyPrefix'>, readonly [number, number]>> = {
  flushIntervalMs: [10, 3_600_000],
  ttlSeconds: [1, 365 * 24 * 3600],
  flushedTtlSeconds: [1, 365 * 24 * 3600],
  maxPendingPairs: [1, 1_000_000],
  maxToolsPerTenant: [1, 1_000_000],
};

/** The environment variable that sets {@link SharedStatsLimits.flushIntervalMs}. */
export const FLUSH_INTERVAL_ENV = 'DISPATCH_STATS_FLUSH_MS';

/** Fills unset limits with their defaults; a value out of its range is a RangeError naming it. */
export function resolveSharedStatsLimits(partial: SharedStatsLimits = {}): ResolvedSharedStatsLimits {
  const out = { ...DEFAULTS, keyPrefix: partial.keyPrefix ?? DEFAULTS.keyPrefix };
  for (const [key, range] of Object.entries(RANGES) as [keyof typeof RANGES, readonly [number, number]][]) {
    out[key] = checkInteger(key, partial[key] ?? DEFAULTS[key], { min: range[0], max: range[1] });
  }
  return out;
}

/** The limits the environment sets: DISPATCH_STATS_FLUSH_MS, whole milliseconds. */
export function sharedStatsLimitsFromEnv(env: NodeJS.ProcessEnv): SharedStatsLimits {
  const text = env[FLUSH_INTERVAL_ENV];
  if (text === undefined || text === '') return {};
  const value = /^\d+$/.test(text) ? Number(text) : text;
  const [min, max] = RANGES.flushIntervalMs;
  return { flushIntervalMs: checkInteger(FLUSH_INTERVAL_ENV, value, { min, max }) };
}
