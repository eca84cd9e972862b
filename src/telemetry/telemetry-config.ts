import { ConfigError, type DispatchConfig } from '../config';
import { unknownKeyProblem } from '../config/unknown-key';
import { MAX_TIMER_MS } from '../options';
import { DEFAULT_MAX_SCRAPE_CONNECTIONS, DEFAULT_SCRAPE_CACHE_MS } from './create-metrics';
import type { Logger } from '../log';
import { DEFAULT_MAX_LABEL_PAIRS, labelPairsPerTenant } from './label-pairs';
import { DEFAULT_RATE_BUCKET_SECONDS, DEFAULT_RATE_WINDOW_SECONDS, MAX_RATE_BUCKET_SECONDS, MAX_RATE_WINDOW_BUCKETS, MAX_RATE_WINDOW_SECONDS, maxWindowSeconds } from './rate-window';

/** The `telemetry:` section of the configuration file. */
export interface TelemetrySettings {
  /** Events carry arguments text instead of its shape; for debugging only. @default false */
  readonly debugPayloads: boolean;
  /** Distinct (tenant, tool) label pairs of the metrics before new ones fold into `_overflow`. @default 1000 */
  readonly maxLabelPairs: number;
  /**
   * Of those, the pairs one tenant may take before its new ones fold into `tenant="<t>", tool="_overflow"`.
   * @default half of maxLabelPairs, at least 1 (500), with authentication configured; without it
   * (every call is tenant `default`), maxLabelPairs, at least 1
   */
  readonly maxLabelPairsPerTenant: number;
  /** How long a rendering of `/metrics` is served again, in ms (MetricsOptions.scrapeCacheMs). @default 0 */
  readonly scrapeCacheMs: number;
  /** Connections the scrape endpoint holds at once (MetricsOptions.maxScrapeConnections). @default 8 */
  readonly maxScrapeConnections: number;
  /**
   * The recent window GetToolStats' rates and alerts and `dispatch_tool_rate` cover, in s: 1 to
   * 60 buckets (rateBucketSeconds x 60, and at most 86400). Replicas sharing Redis may differ: each
   * reads as many of the shared buckets as its window needs. @default 900
   */
  readonly rateWindowSeconds: number;
  /**
   * The width of the window's buckets, in s (1 to 3600). Replicas sharing Redis must agree: the
   * first to flush a tenant's counts stores its width, and the others use it for the shared window
   * and log a warning. @default 60
   */
  readonly rateBucketSeconds: number;
}

const KEYS = ['debug_payloads', 'max_label_pairs', 'max_label_pairs_per_tenant', 'scrape_cache_ms', 'max_scrape_connections', 'rate_window_seconds', 'rate_bucket_seconds'];

/**
 * Reads and checks the `telemetry:` section; unknown keys and wrong types are ConfigErrors. With
 * `singleTenant` (no authentication configured), max_label_pairs_per_tenant left out is the whole
 * max_label_pairs: a half would only fold the one tenant's series early.
 */
export function telemetrySettings(config: Pick<DispatchConfig, 'file' | 'telemetry'>, options: { readonly singleTenant?: boolean } = {}): TelemetrySettings {
  const raw = config.telemetry;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError(config.file, 'telemetry', 'must be a mapping');
  for (const key of Object.keys(raw)) {
    if (!KEYS.includes(key)) throw new ConfigError(config.file, `telemetry.${key}`, unknownKeyProblem(key, KEYS));
  }
  const debug = raw.debug_payloads ?? false;
  if (typeof debug !== 'boolean') throw new ConfigError(config.file, 'telemetry.debug_payloads', 'must be true or false');
  /** The integer at `key`, or `fallback` when unset. */
  const integer = (key: string, fallback: number, min: number, max?: number): number => {
    const value = raw[key] ?? fallback;
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && (max === undefined || value <= max)) return value;
    throw new ConfigError(config.file, `telemetry.${key}`, max === undefined ? `must be an integer >= ${min}` : `must be an integer from ${min} to ${max}`);
  };
  const maxLabelPairs = integer('max_label_pairs', DEFAULT_MAX_LABEL_PAIRS, 0);
  const rateBucketSeconds = integer('rate_bucket_seconds', DEFAULT_RATE_BUCKET_SECONDS, 1, MAX_RATE_BUCKET_SECONDS);
  const rateWindowSeconds = integer('rate_window_seconds', DEFAULT_RATE_WINDOW_SECONDS, 1, MAX_RATE_WINDOW_SECONDS);
  if (rateWindowSeconds > maxWindowSeconds(rateBucketSeconds)) {
    throw new ConfigError(config.file, 'telemetry.rate_window_seconds', `must be an integer from 1 to ${maxWindowSeconds(rateBucketSeconds)}: at most ${MAX_RATE_WINDOW_BUCKETS} buckets of rate_bucket_seconds (${rateBucketSeconds}), and at most a day; raise rate_bucket_seconds for a longer window`);
  }
  return {
    debugPayloads: debug,
    maxLabelPairs,
    maxLabelPairsPerTenant: integer('max_label_pairs_per_tenant', options.singleTenant ? Math.max(1, maxLabelPairs) : labelPairsPerTenant(maxLabelPairs), 1),
    // A longer timer runs at once in Node: the rendering would not be kept at all.
    scrapeCacheMs: integer('scrape_cache_ms', DEFAULT_SCRAPE_CACHE_MS, 0, MAX_TIMER_MS),
    maxScrapeConnections: integer('max_scrape_connections', DEFAULT_MAX_SCRAPE_CONNECTIONS, 1),
    rateWindowSeconds,
    rateBucketSeconds,
  };
}

/** The OTEL_METRICS_EXPORTER values dispatch acts on. */
const METRICS_EXPORTERS = new Set(['prometheus', 'none']);

/**
 * Where the Prometheus endpoint listens, `listen` (--metrics-listen) as the standard variables
 * allow it: undefined (metrics off) with OTEL_METRICS_EXPORTER=none or OTEL_SDK_DISABLED=true.
 * `prometheus` (or the variable unset) serves `listen`; other values (`otlp`, `console`: dispatch
 * has no metrics push) are logged and ignored.
 */
export function metricsListenFromEnv(listen: string | undefined, env: NodeJS.ProcessEnv, logger: Logger): string | undefined {
  const exporters = (env.OTEL_METRICS_EXPORTER ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
  const ignored = exporters.filter((e) => !METRICS_EXPORTERS.has(e));
  if (ignored.length > 0) logger.warn('unsupported OTEL_METRICS_EXPORTER values ignored (metrics are served for Prometheus only, at --metrics-listen)', { exporters: ignored });
  const off = exporters.includes('none') ? 'OTEL_METRICS_EXPORTER=none' : env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' ? 'OTEL_SDK_DISABLED=true' : undefined;
  if (off !== undefined) {
    if (listen !== undefined) logger.info('metrics off: the Prometheus endpoint is not served', { reason: off, metricsListen: listen });
    return undefined;
  }
  if (listen === undefined && exporters.includes('prometheus')) logger.warn('OTEL_METRICS_EXPORTER=prometheus, but metrics are served only where --metrics-listen (DISPATCH_METRICS_LISTEN) says, and it is unset: metrics are off');
  return listen;
}
