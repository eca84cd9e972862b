import type { Counter, Histogram } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { CallSummary } from '../events';
import type { Logger } from '../log';
import { parseBreakerKey } from '../pipeline';
import { createLabelPairs, UNKNOWN_TOOL_LABEL, type PairLabels } from './label-pairs';
import { startMetricsServer } from './metrics-server';
import { RATE_NAMES } from './rate-alerts';
import { addCounters, ratesOf, type ToolCounters, type ToolStats } from './tool-stats';

/** Recording side of the metrics, and their scrape endpoint. */
export interface Metrics {
  /** The port `/metrics` is served on. */
  readonly port: number;
  recordCall(summary: CallSummary): void;
  shutdown(): Promise<void>;
}

/** Options of {@link startMetrics}. */
export interface MetricsOptions {
  /** HOST:PORT of the Prometheus scrape endpoint (port 0 picks one). */
  readonly listen: string;
  /** Read at scrape time for the rate gauges, per (tenant, tool). */
  readonly stats: ToolStats;
  /** Breaker states at scrape time, by breaker key (`tool` shared, or `tenant/tool`). */
  readonly breakerStates: () => ReadonlyMap<string, string>;
  /** Local Subscribe streams at scrape time. */
  readonly subscribers: () => number;
  /**
   * Distinct (tenant, tool) label pairs before further pairs are folded into the `_overflow`
   * pair and counted by `dispatch.tool.label_overflows`; an integer >= 0.
   * @default 1000 (DEFAULT_MAX_LABEL_PAIRS)
   */
  readonly maxLabelPairs?: number;
  readonly logger: Logger;
}

/** Upper bounds of the call duration histogram, in seconds. */
export const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

const BREAKER_VALUE: Readonly<Record<string, number>> = { closed: 0, half_open: 1, open: 2 };

/**
 * OpenTelemetry metrics served for Prometheus: calls by tenant, tool and outcome, a duration
 * histogram, a counter per operational rate (divide by `dispatch_tool_calls_total` for the rate),
 * the six rates as gauges, breaker states and the number of subscribers. Every per-tool series
 * carries `tenant` and `tool` labels, bounded by `maxLabelPairs`.
 */
export async function startMetrics(options: MetricsOptions): Promise<Metrics> {
  const pairs = createLabelPairs(options.maxLabelPairs);
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  const meter = provider.getMeter('dispatch');
  const calls = meter.createCounter('dispatch.tool.calls', { description: 'Tool calls finished, by tenant, tool and outcome (ok, an error kind, or a hard error reason)' });
  const attempts = meter.createCounter('dispatch.tool.attempts', { description: 'Attempts made, by tenant and tool' });
  const duration: Histogram = meter.createHistogram('dispatch.tool.call.duration', { description: 'Call duration including retries', unit: 's', advice: { explicitBucketBoundaries: DURATION_BUCKETS_S } });
  const rateCounter = (name: string, description: string): Counter => meter.createCounter(`dispatch.tool.${name}`, { description: `${description}; divide by dispatch.tool.calls for the rate` });
  const events = {
    validationFailed: rateCounter('validation_failures', 'Calls refused for invalid arguments'),
    timedOut: rateCounter('timeouts', 'Calls with an attempt that timed out'),
    retried: rateCounter('retries', 'Calls retried at least once'),
    idempotentHit: rateCounter('idempotent_hits', 'Calls answered from an idempotency record'),
    bounded: rateCounter('bounded_results', 'Calls whose result was cut by the dispatch layer'),
    unexpected: rateCounter('unexpected_exceptions', 'Calls with an attempt that crashed or broke the tool contract'),
  } as const;
  const overflows = meter.createCounter('dispatch.tool.label_overflows', { description: 'Calls recorded under tenant and tool "_overflow" because their (tenant, tool) pair came past the label cap' });
  overflows.add(0);
  meter.createObservableGauge('dispatch.tool.rate', { description: 'The six operational rates per tenant and tool since start (fraction of calls)' }).addCallback((result) => {
    // Folded pairs share one labels object, so their counts are summed before the rates.
    const sums = new Map<PairLabels, ToolCounters>();
    for (const { tenant, tool, counters } of options.stats.pairs()) {
      const { labels } = pairs.of(tenant, tool);
      sums.set(labels, addCounters(sums.get(labels), counters));
    }
    for (const [labels, counters] of sums) {
      const rates = ratesOf(counters);
      for (const key of Object.keys(RATE_NAMES) as (keyof typeof RATE_NAMES)[]) result.observe(rates[key], { ...labels, rate: RATE_NAMES[key] });
    }
  });
  meter.createObservableGauge('dispatch.breaker.state', { description: 'Breaker state per tenant and tool (tenant "_shared" for config-file tools): 0 closed, 1 half open, 2 open' }).addCallback((result) => {
    // The overflow pair shows the worst state of the breakers folded into it.
    const worst = new Map<PairLabels, number>();
    for (const [key, state] of options.breakerStates()) {
      const { tenant, tool } = parseBreakerKey(key);
      const { labels } = pairs.of(tenant, tool);
      worst.set(labels, Math.max(worst.get(labels) ?? 0, BREAKER_VALUE[state] ?? 0));
    }
    for (const [labels, value] of worst) result.observe(value, labels);
  });
  meter.createObservableGauge('dispatch.events.subscribers', { description: 'Subscribe streams open on this replica' }).addCallback((result) => result.observe(options.subscribers()));

  const server = await startMetricsServer(options.listen, (request, response) => exporter.getMetricsRequestHandler(request, response));
  options.logger.info('metrics serving', { listen: options.listen, port: server.port, path: '/metrics' });
  // Label pairs whose rate counters exist; at most maxLabelPairs + 1 entries.
  const seen = new Set<PairLabels>();
  return {
    port: server.port,
    recordCall(s) {
      const { labels, folded } = pairs.of(s.tenant, s.known ? s.tool : UNKNOWN_TOOL_LABEL);
      if (folded) overflows.add(1);
      const byOutcome = { ...labels, outcome: s.outcome };
      calls.add(1, byOutcome);
      duration.record(s.durationMs / 1000, byOutcome);
      attempts.add(s.attempts, labels);
      const first = !seen.has(labels) && seen.add(labels) !== undefined;
      for (const key of Object.keys(events) as (keyof typeof events)[]) {
        if (s[key]) events[key].add(1, labels);
        else if (first) events[key].add(0, labels);
      }
    },
    async shutdown() {
      await server.close();
      await provider.shutdown().catch((error: Error) => options.logger.warn('metrics shutdown failed', { error: error.message }));
    },
  };
}
