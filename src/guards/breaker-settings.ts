import { unknownKeyProblem } from '../config/unknown-key';
import { MAX_TIMER_MS } from '../options/limits';
import { timerTooLong } from './parse-rule';

/** When a tool's breaker opens and how it recovers (DESIGN section 8). */
export interface BreakerSettings {
  /** Counted failures in a row that open the breaker. @default 5 */
  readonly consecutiveFailures: number;
  /** Share of counted failures in the rolling window that opens the breaker (0..1]. @default 0.5 */
  readonly failureRate: number;
  /** Counted calls the rolling window must hold before the failure rate applies. @default 10 */
  readonly minCalls: number;
  /** Length of the rolling window, in ms. @default 60000 */
  readonly windowMs: number;
  /** Buckets the rolling window is kept in; the window slides one bucket at a time. @default 10 */
  readonly windowBuckets: number;
  /** Time an open breaker waits before admitting a single probe, in ms. @default 30000 */
  readonly halfOpenAfterMs: number;
  /**
   * Time after which a probe that never reported frees the half-open slot, in ms; never less than
   * the probe's tool timeout plus 30 s (PROBE_LEASE_MARGIN_MS), so a probe still running keeps it.
   * @default 300000
   */
  readonly probeLeaseMs: number;
}

/** The defaults of {@link BreakerSettings}. */
export const DEFAULT_BREAKER_SETTINGS: BreakerSettings = Object.freeze({
  consecutiveFailures: 5,
  failureRate: 0.5,
  minCalls: 10,
  windowMs: 60_000,
  windowBuckets: 10,
  halfOpenAfterMs: 30_000,
  probeLeaseMs: 300_000,
});

const YAML_NAMES: Readonly<Record<keyof BreakerSettings, string>> = {
  consecutiveFailures: 'consecutive_failures',
  failureRate: 'failure_rate',
  minCalls: 'min_calls',
  windowMs: 'window_ms',
  windowBuckets: 'window_buckets',
  halfOpenAfterMs: 'half_open_after_ms',
  probeLeaseMs: 'probe_lease_ms',
};

/**
 * Breaker settings from their YAML form (snake_case keys), defaults for what is absent. Returns the
 * settings or the problem, with the offending key as its path.
 */
export function breakerSettingsFromYaml(raw: unknown, base: BreakerSettings = DEFAULT_BREAKER_SETTINGS): BreakerSettings | { path: string; problem: string } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { path: '', problem: 'must be a mapping' };
  const byYaml = new Map(Object.entries(YAML_NAMES).map(([field, yaml]) => [yaml, field as keyof BreakerSettings]));
  const out: Record<string, number> = { ...base };
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const field = byYaml.get(key);
    if (!field) return { path: key, problem: unknownKeyProblem(key, Object.values(YAML_NAMES)) };
    if (field === 'failureRate') {
      if (typeof value !== 'number' || !(value > 0 && value <= 1)) return { path: key, problem: `must be a number in (0, 1], got ${JSON.stringify(value)}` };
    } else if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
      return { path: key, problem: `must be a positive integer, got ${JSON.stringify(value)}` };
    } else if (key.endsWith('_ms') && value > MAX_TIMER_MS) {
      return { path: key, problem: timerTooLong(value) };
    }
    out[field] = value;
  }
  if (out.windowBuckets! > out.windowMs!) return { path: 'window_buckets', problem: `must not exceed window_ms (${out.windowMs})` };
  return Object.freeze(out) as unknown as BreakerSettings;
}
