import { parseConfig } from '../../src/config';
import { alertsOf, createToolStats, parseHostPort, ratesOf, telemetrySettings, tracesEnabled } from '../../src/telemetry';
import type { CallSummary } from '../../src/events';

test('traces are on only when the OTEL_* variables ask for OTLP', () => {
  expect(tracesEnabled({})).toBe(false);
  expect(tracesEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
  expect(tracesEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
  expect(tracesEnabled({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
  expect(tracesEnabled({ OTEL_TRACES_EXPORTER: 'console,otlp' })).toBe(true);
  expect(tracesEnabled({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(false);
  expect(tracesEnabled({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
  expect(tracesEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
});

test('alerts name each rate past its threshold, as "timeout: 7.5% > 5%"', () => {
  const zero = { validationFailure: 0, timeout: 0, retry: 0, idempotentHit: 0, resultBounding: 0, unexpectedException: 0, error: 0 };
  expect(alertsOf(zero)).toEqual([]);
  expect(alertsOf({ ...zero, timeout: 0.075 })).toEqual(['timeout: 7.5% > 5%']);
  expect(alertsOf({ ...zero, timeout: 0.05, validationFailure: 0.15, retry: 0.1, idempotentHit: 0.05, resultBounding: 0.2, error: 0.5 })).toEqual([]);
  expect(alertsOf({ validationFailure: 0.151, timeout: 0.051, retry: 0.101, idempotentHit: 0.051, resultBounding: 0.201, unexpectedException: 0.0001, error: 0.501 })).toEqual([
    'validation_failure: 15.1% > 15%',
    'timeout: 5.1% > 5%',
    'retry: 10.1% > 10%',
    'idempotent_hit: 5.1% > 5%',
    'result_bounding: 20.1% > 20%',
    'unexpected_exception: 0.01% > 0%',
    'error: 50.1% > 50%',
  ]);
});

const summary = (over: Partial<CallSummary>): CallSummary => ({ tenant: 't', tool: 'x', known: true, outcome: 'ok', attempts: 1, durationMs: 1, validationFailed: false, timedOut: false, retried: false, idempotentHit: false, bounded: false, unexpected: false, ...over });

test('tool stats count per tenant and tool, skip unknown names, and stop at their bound', () => {
  const stats = createToolStats({ maxTracked: 2 });
  stats.record(summary({ timedOut: true, retried: true, attempts: 2 }));
  stats.record(summary({}));
  stats.record(summary({ tenant: 'u', validationFailed: true, attempts: 0 }));
  stats.record(summary({ tool: 'ghost', known: false }));
  stats.record(summary({ tool: 'third' }));
  expect(stats.get('t', 'x')).toMatchObject({ calls: 2, attempts: 3, timeouts: 1, retries: 1 });
  expect(ratesOf(stats.get('t', 'x'))).toMatchObject({ timeout: 0.5, retry: 0.5, validationFailure: 0 });
  expect(ratesOf(undefined)).toMatchObject({ timeout: 0, unexpectedException: 0 });
  expect(stats.tools('t')).toEqual(['x']);
  expect(stats.get('t', 'third')).toBeUndefined();
  expect(stats.totals().get('x')).toMatchObject({ calls: 3, validationFailures: 1 });
  expect([...stats.pairs()].map(({ tenant, tool, counters }) => [tenant, tool, counters.calls])).toEqual([
    ['t', 'x', 2],
    ['u', 'x', 1],
  ]);
});

test('one tenant cannot fill the stats table for the others: each tracks up to its own quota of tools', () => {
  // Before, a single first-come cap: mallory's calls of 3 tools filled a table of 3 pairs, and
  // alice's calls were never counted.
  const stats = createToolStats({ maxTracked: 4, maxTrackedPerTenant: 2 });
  for (const tool of ['t1', 't2', 't3']) stats.record(summary({ tenant: 'mallory', tool }));
  for (let i = 0; i < 10; i++) stats.record(summary({ tenant: 'alice', tool: 'send_email', validationFailed: true }));
  stats.record(summary({ tenant: 'mallory', tool: 't1' }));
  expect(stats.tools('mallory')).toEqual(['t1', 't2']);
  expect(stats.get('mallory', 't1')).toMatchObject({ calls: 2 });
  expect(stats.get('mallory', 't3')).toBeUndefined();
  expect(stats.get('alice', 'send_email')).toMatchObject({ calls: 10, validationFailures: 10 });
  // The table's own bound still holds: bob's second tool is its fifth pair.
  stats.record(summary({ tenant: 'bob', tool: 'a' }));
  stats.record(summary({ tenant: 'bob', tool: 'b' }));
  expect(stats.tools('bob')).toEqual(['a']);
  expect([...stats.pairs()]).toHaveLength(4);

  // The defaults: 1,000 tools per tenant, 10,000 pairs in all.
  const defaults = createToolStats();
  for (let i = 0; i < 1_001; i++) defaults.record(summary({ tenant: 'mallory', tool: `tool-${i}` }));
  defaults.record(summary({ tenant: 'alice', tool: 'send_email' }));
  expect(defaults.tools('mallory')).toHaveLength(1_000);
  expect(defaults.get('mallory', 'tool-1000')).toBeUndefined();
  expect(defaults.get('alice', 'send_email')).toMatchObject({ calls: 1 });
  // Without a quota given, a tenant's is a tenth of the table, at least one tool.
  const small = createToolStats({ maxTracked: 3 });
  for (const tool of ['t1', 't2', 't3']) small.record(summary({ tenant: 'mallory', tool }));
  small.record(summary({ tenant: 'alice', tool: 'send_email' }));
  expect(small.tools('mallory')).toEqual(['t1']);
  expect(small.get('alice', 'send_email')).toMatchObject({ calls: 1 });

  expect(() => createToolStats({ maxTrackedPerTenant: 0 })).toThrow('maxTrackedPerTenant must be a positive integer, got 0');
  expect(() => createToolStats({ maxTracked: 1.5 })).toThrow('maxTracked must be a positive integer, got 1.5');
});

test('the telemetry section: debug_payloads, max_label_pairs, scrape_cache_ms and max_scrape_connections, checked', () => {
  const defaults = { debugPayloads: false, maxLabelPairs: 1000, maxLabelPairsPerTenant: 500, scrapeCacheMs: 0, maxScrapeConnections: 8, rateWindowSeconds: 900, rateBucketSeconds: 60 };
  expect(telemetrySettings(parseConfig('telemetry: { debug_payloads: true }', 'c.yaml'))).toEqual({ ...defaults, debugPayloads: true });
  expect(telemetrySettings(parseConfig('tools: []', 'c.yaml'))).toEqual(defaults);
  expect(telemetrySettings(parseConfig('telemetry: { max_label_pairs: 20 }', 'c.yaml'))).toEqual({ ...defaults, maxLabelPairs: 20, maxLabelPairsPerTenant: 10 });
  expect(telemetrySettings(parseConfig('telemetry: { scrape_cache_ms: 1000, max_scrape_connections: 2 }', 'c.yaml'))).toEqual({ ...defaults, scrapeCacheMs: 1000, maxScrapeConnections: 2 });
  expect(telemetrySettings(parseConfig('telemetry: { scrape_cache_ms: 2147483647 }', 'c.yaml')).scrapeCacheMs).toBe(2147483647);
  expect(() => telemetrySettings(parseConfig('telemetry: { max_label_pairs: -1 }', 'c.yaml'))).toThrow('c.yaml: telemetry.max_label_pairs: must be an integer >= 0');
  expect(() => telemetrySettings(parseConfig('telemetry: { max_label_pairs: "many" }', 'c.yaml'))).toThrow('c.yaml: telemetry.max_label_pairs: must be an integer >= 0');
  expect(() => telemetrySettings(parseConfig('telemetry: { scrape_cache_ms: -1 }', 'c.yaml'))).toThrow('c.yaml: telemetry.scrape_cache_ms: must be an integer from 0 to 2147483647');
  expect(() => telemetrySettings(parseConfig('telemetry: { scrape_cache_ms: 2147483648 }', 'c.yaml'))).toThrow('c.yaml: telemetry.scrape_cache_ms: must be an integer from 0 to 2147483647');
  expect(() => telemetrySettings(parseConfig('telemetry: { scrape_cache_ms: 1.5 }', 'c.yaml'))).toThrow('c.yaml: telemetry.scrape_cache_ms: must be an integer from 0 to 2147483647');
  expect(() => telemetrySettings(parseConfig('telemetry: { max_scrape_connections: 0 }', 'c.yaml'))).toThrow('c.yaml: telemetry.max_scrape_connections: must be an integer >= 1');
  expect(() => telemetrySettings(parseConfig('telemetry: { max_scrape_connections: "8" }', 'c.yaml'))).toThrow('c.yaml: telemetry.max_scrape_connections: must be an integer >= 1');
  expect(() => telemetrySettings(parseConfig('telemetry: { debug: true }', 'c.yaml'))).toThrow('c.yaml: telemetry.debug: unknown key "debug" (did you mean debug_payloads?)');
  expect(telemetrySettings(parseConfig('telemetry: { rate_window_seconds: 60 }', 'c.yaml')).rateWindowSeconds).toBe(60);
  expect(() => telemetrySettings(parseConfig('telemetry: { rate_window_seconds: 0 }', 'c.yaml'))).toThrow('c.yaml: telemetry.rate_window_seconds: must be an integer from 1 to 86400');
  // At most 60 buckets of rate_bucket_seconds: a day needs buckets of 1440 s.
  expect(() => telemetrySettings(parseConfig('telemetry: { rate_window_seconds: 3601 }', 'c.yaml'))).toThrow('c.yaml: telemetry.rate_window_seconds: must be an integer from 1 to 3600: at most 60 buckets of rate_bucket_seconds (60), and at most a day; raise rate_bucket_seconds for a longer window');
  expect(telemetrySettings(parseConfig('telemetry: { rate_window_seconds: 86400, rate_bucket_seconds: 1440 }', 'c.yaml'))).toMatchObject({ rateWindowSeconds: 86400, rateBucketSeconds: 1440 });
  expect(() => telemetrySettings(parseConfig('telemetry: { rate_bucket_seconds: 0 }', 'c.yaml'))).toThrow('c.yaml: telemetry.rate_bucket_seconds: must be an integer from 1 to 3600');
  expect(() => telemetrySettings(parseConfig('telemetry: { debug_payloads: "yes" }', 'c.yaml'))).toThrow('c.yaml: telemetry.debug_payloads: must be true or false');
  expect(() => telemetrySettings(parseConfig('telemetry: [1]', 'c.yaml'))).toThrow('c.yaml: telemetry: must be a mapping');
});

test('the metrics address is HOST:PORT', () => {
  expect(parseHostPort('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 });
  expect(parseHostPort('[::1]:0')).toEqual({ host: '::1', port: 0 });
  expect(() => parseHostPort('9464')).toThrow('--metrics-listen must be HOST:PORT, got "9464"');
  expect(() => parseHostPort('h:99999')).toThrow('--metrics-listen must be HOST:PORT, got "h:99999"');
});
