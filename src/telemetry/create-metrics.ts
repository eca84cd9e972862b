import type { ServerResponse } from 'node:http';
import type { AttemptSink, CallSummary } from '../events';
import type { Logger } from '../log';
import { checkInteger } from '../options';
import { createAttemptMetrics } from './attempt-metrics';
import { breakerGaugeText } from './breaker-gauge-text';
import { createCallMetrics } from './call-metrics';
import { createLabelPairs, type LiveTool, type PairLabels } from './label-pairs';
import { sendChunks, startMetricsServer } from './metrics-server';
import { serviceResource } from './service-resource';
import { rateGaugeText } from './rate-gauge-text';
import { sharedRendering } from './shared-rendering';
import { createSlotSeries } from './slot-series-text';
import { SlicedText } from './sliced-text';
import type { ToolStats } from './tool-stats';

/** Recording side of the metrics, and their scrape endpoint. */
export interface Metrics {
  /** The port `/metrics` is served on. */
  readonly port: number;
  recordCall(summary: CallSummary): void;
  /**
   * Drops the series of a removed tool's (tenant, tool) pair and gives its place back to the label
   * cap and its tenant's quota (nothing for a `_shared` pair, a pair that held no labels of its own,
   * or a tool still registered, as a config-file tool of the same name is).
   */
  forgetTool(tenant: string, tool: string): void;
  /** Drops the series of every pair of an erased tenant (EraseTenant) and gives their places back. */
  forgetTenant(tenant: string): void;
  /** Counts an attempt that ended (`dispatch_tool_attempt_outcomes_total`, `dispatch_tool_attempt_duration_seconds`). */
  readonly recordAttempt: AttemptSink;
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
  /** Slots taken now of the tools with a concurrency cap, by breaker key. */
  readonly slotsInUse?: () => ReadonlyMap<string, number> | undefined;
  /** Attempts refused for want of a slot so far, by breaker key, when there are caps. */
  readonly slotRefusals?: () => ReadonlyMap<string, number> | undefined;
  /** Attempts refused by a rate limit so far, by breaker key, when there are limits. */
  readonly rateRefusals?: () => ReadonlyMap<string, number> | undefined;
  /** Dispatch RPCs running now, the tool calls they may run at once, and RPCs refused so far (the turn bounds), once the server runs. */
  readonly turns?: () => { readonly inFlight: number; readonly callsInFlight?: number; readonly refused: number } | undefined;
  /** Trace spans lost so far (Tracing.lost), when traces are on: so an operator can alert on them, not only read a log line. */
  readonly tracesLost?: () => { readonly dropped: number; readonly failedBatches: number } | undefined;
  /**
   * Whether a (tenant, tool) pair's tool is registered now (a config-file tool's for any tenant), so
   * that a pair first seen for a removed tool (a call that ended after the removal) takes no label
   * pair of its own: it counts under its tenant's `_unknown` pair. Every tool is taken as
   * registered without it.
   */
  readonly live?: LiveTool;
  /** Whether the shared store (Redis) is connected; undefined for the in-memory store (no series). */
  readonly storeUp?: () => boolean | undefined;
  /**
   * Distinct (tenant, tool) label pairs before further pairs are folded into the `_overflow`
   * pair and counted by `dispatch.tool.label_overflows`; an integer >= 0.
   * @default 1000 (DEFAULT_MAX_LABEL_PAIRS)
   */
  readonly maxLabelPairs?: number;
  /**
   * Of those, the pairs one tenant may take; its later pairs fold into `tenant="<t>",
   * tool="_overflow"` (also counted by `dispatch.tool.label_overflows`), so that one tenant cannot
   * push the others' series into overflow; an integer >= 1.
   * @default half of maxLabelPairs, at least 1 (500)
   */
  readonly maxLabelPairsPerTenant?: number;
  /**
   * How long a rendering of `/metrics` is served again, in milliseconds; scrapes that come while
   * one is made always share it. An integer >= 0.
   * @default 0 (DEFAULT_SCRAPE_CACHE_MS: a scrape after a rendering ended renders anew)
   */
  readonly scrapeCacheMs?: number;
  /**
   * Connections the scrape endpoint holds at once; a further one closes the oldest with no request
   * in service (idle, or still sending its request), or itself when all are being answered.
   * @default 8 (DEFAULT_MAX_SCRAPE_CONNECTIONS)
   */
  readonly maxScrapeConnections?: number;
  readonly logger: Logger;
}

/**
 * How long a rendering is served again by default: not at all, so a scrape always shows the state
 * after the previous one ended (tests and people read metrics back at once). Concurrent scrapes
 * share one rendering whatever this is; at the label cap a rendering takes ~100 ms of CPU, in
 * slices of SLICE_MS, and is sent in chunks made within them (sliced-text.ts).
 * `telemetry: { scrape_cache_ms: 1000 }` in the config file lets Prometheus replicas and
 * dashboards within a second share one.
 */
export const DEFAULT_SCRAPE_CACHE_MS = 0;

/** Scrape connections held at once: a few Prometheus replicas and people, not a flood. */
export const DEFAULT_MAX_SCRAPE_CONNECTIONS = 8;

/**
 * OpenTelemetry metrics served for Prometheus: calls by tenant, tool and outcome, a duration
 * histogram, attempts by outcome and their executor time, a counter per operational rate (divide by `dispatch_tool_calls_total` for the rate),
 * the six rates and the error rate as gauges, breaker states and the number of subscribers. Every per-tool series
 * carries `tenant` and `tool` labels, bounded by `maxLabelPairs`; a removed tool's go with it (forgetTool).
 */
export async function startMetrics(options: MetricsOptions): Promise<Metrics> {
  const cacheMs = checkInteger('scrapeCacheMs', options.scrapeCacheMs ?? DEFAULT_SCRAPE_CACHE_MS, { min: 0 });
  const maxConnections = checkInteger('maxScrapeConnections', options.maxScrapeConnections ?? DEFAULT_MAX_SCRAPE_CONNECTIONS);
  const pairs = createLabelPairs(options.maxLabelPairs, options.maxLabelPairsPerTenant, options.live);
  // The per-call series are counted by createCallMetrics and written at scrape time: the SDK's
  // synchronous instruments measured at ~12% of the server's CPU per call.
  const callMetrics = createCallMetrics(pairs);
  const attemptMetrics = createAttemptMetrics(pairs);
  const slotSeries = createSlotSeries(pairs, options.live);
  // Loaded here, not with the module (~100 modules, ~80 ms): a dispatch serving no metrics never needs them.
  const { PrometheusExporter, PrometheusSerializer } = require('@opentelemetry/exporter-prometheus') as typeof import('@opentelemetry/exporter-prometheus');
  const { MeterProvider } = require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ resource: serviceResource(), readers: [exporter] });
  const meter = provider.getMeter('dispatch');
  meter.createObservableGauge('dispatch.store.up', { description: '1 while the shared store (Redis) is connected, 0 while it is not: side-effecting calls then fail STORE_UNAVAILABLE, not run; absent with the in-memory store' }).addCallback((result) => {
    const up = options.storeUp?.();
    if (up !== undefined) result.observe(up ? 1 : 0);
  });
  meter.createObservableGauge('dispatch.events.subscribers', { description: 'Subscribe streams open on this replica' }).addCallback((result) => result.observe(options.subscribers()));
  meter.createObservableGauge('dispatch.turns.in_flight', { description: 'Dispatch RPCs (turns) running on this replica' }).addCallback((result) => {
    const turns = options.turns?.();
    if (turns) result.observe(turns.inFlight);
  });
  meter.createObservableGauge('dispatch.turns.calls_in_flight', { description: 'Tool calls the running Dispatch RPCs may run at once on this replica (each turn holds its peak: 1 sequential, min(calls, max_concurrency) parallel)' }).addCallback((result) => {
    const turns = options.turns?.();
    if (turns?.callsInFlight !== undefined) result.observe(turns.callsInFlight);
  });
  meter.createObservableCounter('dispatch.turns.refused', { description: 'Dispatch RPCs refused RESOURCE_EXHAUSTED for limits.max_turns_in_flight, max_turns_per_tenant, max_argument_chars_in_flight or max_calls_in_flight (and their per-tenant shares)' }).addCallback((result) => {
    const turns = options.turns?.();
    if (turns) result.observe(turns.refused);
  });

  meter.createObservableCounter('dispatch.trace.spans_dropped', { description: 'Trace spans dropped because the export queue was full (OTEL_BSP_MAX_QUEUE_SIZE), when trace export is on' }).addCallback((result) => {
    const lost = options.tracesLost?.();
    if (lost) result.observe(lost.dropped);
  });
  meter.createObservableCounter('dispatch.trace.export_failures', { description: 'Batches of trace spans that failed to export (their spans are lost), when trace export is on' }).addCallback((result) => {
    const lost = options.tracesLost?.();
    if (lost) result.observe(lost.failedBatches);
  });

  // The breakers' states and the caps' counts (read first, taking label pairs in the order they
  // did), the SDK's part (the gauges above) as its exporter writes it, the breakers and caps, then
  // the rates and the per-call series.
  const serializer = new PrometheusSerializer(undefined, false);
  const render = sharedRendering(async () => {
    const breakers = breakerGaugeText(options.breakerStates(), pairs);
    const slots = slotSeries.text({ inUse: options.slotsInUse?.(), slotRefusals: options.slotRefusals?.(), rateRefusals: options.rateRefusals?.() });
    const { resourceMetrics, errors } = await exporter.collect();
    if (errors.length > 0) options.logger.warn('metrics collection errors', { errors: errors.map(String) });
    const out = new SlicedText();
    out.add(serializer.serialize(resourceMetrics));
    await breakers(out);
    await slots(out);
    await rateGaugeText(out, options.stats, pairs);
    await attemptMetrics.prometheusText(out);
    return callMetrics.prometheusText(out);
  }, cacheMs);
  const scrape = (response: ServerResponse) =>
    render().then(
      (chunks) => sendChunks(response, chunks),
      (error: unknown) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`# failed to export metrics: ${String(error)}\n`),
    );
  const server = await startMetricsServer(options.listen, (_request, response) => void scrape(response), { maxConnections });
  options.logger.info('metrics serving', { listen: options.listen, port: server.port, path: '/metrics' });
  const dropSeries = (labels: PairLabels) => {
    callMetrics.forget(labels);
    attemptMetrics.forget(labels);
    slotSeries.forget(labels);
  };
  return {
    port: server.port,
    recordCall: (summary) => callMetrics.record(summary),
    recordAttempt: attemptMetrics.record,
    forgetTool(tenant, tool) {
      if (options.live?.(tenant, tool)) return;
      const labels = pairs.forget(tenant, tool);
      if (labels) dropSeries(labels);
    },
    forgetTenant: (tenant) => pairs.forgetTenant(tenant).forEach(dropSeries),
    async shutdown() {
      await server.close();
      await provider.shutdown().catch((error: Error) => options.logger.warn('metrics shutdown failed', { error: error.message }));
    },
  };
}
