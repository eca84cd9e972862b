import type { Attributes, Counter, Histogram } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { CallSummary } from '../events';
import type { Logger } from '../log';
import { startMetricsServer } from './metrics-server';
import { RATE_NAMES } from './rate-alerts';
import { ratesOf, type ToolStats } from './tool-stats';

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
  /** Read at scrape time for the rate gauges. */
  readonly stats: ToolStats;
  /** Breaker states at scrape time, by tool. */
  readonly breakerStates: () => ReadonlyMap<string, string>;
  /** Local Subscribe streams at scrape time. */
  readonly subscribers: () => number;
  readonly logger: Logger;
}

/** The tool label of calls whose name matched no tool, so invented names cannot grow the series. */
export const UNKNOWN_TOOL_LABEL = '_unknown';

/** Upper bounds of the call duration histogram, in seconds. */
export const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

const BREAKER_VALUE: Readonly<Record<string, number>> = { closed: 0, half_open: 1, open: 2 };

/**
 * OpenTelemetry metrics served for Prometheus: calls by tool and outcome, a duration histogram,
 * a counter per operational rate (divide by `dispatch_tool_calls_total` for the rate), the six
 * rates as gauges, breaker states and the number of subscribers.
 */
export async function startMetrics(options: MetricsOptions): Promise<Metrics> {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  const meter = provider.getMeter('dispatch');
  const calls = meter.createCounter('dispatch.tool.calls', { description: 'Tool calls finished, by tool and outcome (ok, an error kind, or a hard error reason)' });
  const attempts = meter.createCounter('dispatch.tool.attempts', { description: 'Attempts made, by tool' });
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
  meter.createObservableGauge('dispatch.tool.rate', { description: 'The six operational rates per tool since start (fraction of calls)' }).addCallback((result) => {
    for (const [tool, counters] of options.stats.totals()) {
      const rates = ratesOf(counters);
      for (const key of Object.keys(RATE_NAMES) as (keyof typeof RATE_NAMES)[]) result.observe(rates[key], { tool, rate: RATE_NAMES[key] });
    }
  });
  meter.createObservableGauge('dispatch.breaker.state', { description: 'Breaker state per tool: 0 closed, 1 half open, 2 open' }).addCallback((result) => {
    for (const [tool, state] of options.breakerStates()) result.observe(BREAKER_VALUE[state] ?? 0, { tool });
  });
  meter.createObservableGauge('dispatch.events.subscribers', { description: 'Subscribe streams open on this replica' }).addCallback((result) => result.observe(options.subscribers()));

  const server = await startMetricsServer(options.listen, (request, response) => exporter.getMetricsRequestHandler(request, response));
  options.logger.info('metrics serving', { listen: options.listen, port: server.port, path: '/metrics' });
  const seen = new Set<string>();
  return {
    port: server.port,
    recordCall(s) {
      const tool = s.known ? s.tool : UNKNOWN_TOOL_LABEL;
      const byTool: Attributes = { tool };
      calls.add(1, { tool, outcome: s.outcome });
      duration.record(s.durationMs / 1000, { tool, outcome: s.outcome });
      attempts.add(s.attempts, byTool);
      const first = !seen.has(tool) && seen.add(tool) !== undefined;
      for (const key of Object.keys(events) as (keyof typeof events)[]) {
        if (s[key]) events[key].add(1, byTool);
        else if (first) events[key].add(0, byTool);
      }
    },
    async shutdown() {
      await server.close();
      await provider.shutdown().catch((error: Error) => options.logger.warn('metrics shutdown failed', { error: error.message }));
    },
  };
}
