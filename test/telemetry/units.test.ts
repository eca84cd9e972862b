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
  const zero = { validationFailure: 0, timeout: 0, retry: 0, idempotentHit: 0, resultBounding: 0, unexpectedException: 0 };
  expect(alertsOf(zero)).toEqual([]);
  expect(alertsOf({ ...zero, timeout: 0.075 })).toEqual(['timeout: 7.5% > 5%']);
  expect(alertsOf({ ...zero, timeout: 0.05, validationFailure: 0.15, retry: 0.1, idempotentHit: 0.05, resultBounding: 0.2 })).toEqual([]);
  expect(alertsOf({ validationFailure: 0.151, timeout: 0.051, retry: 0.101, idempotentHit: 0.051, resultBounding: 0.201, unexpectedException: 0.0001 })).toEqual([
    'validation_failure: 15.1% > 15%',
    'timeout: 5.1% > 5%',
    'retry: 10.1% > 10%',
    'idempotent_hit: 5.1% > 5%',
    'result_bounding: 20.1% > 20%',
    'unexpected_exception: 0% > 0%',
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

test('the telemetry section: debug_payloads and max_label_pairs, checked', () => {
  expect(telemetrySettings(parseConfig('telemetry: { debug_payloads: true }', 'c.yaml'))).toEqual({ debugPayloads: true, maxLabelPairs: 1000 });
  expect(telemetrySettings(parseConfig('tools: []', 'c.yaml'))).toEqual({ debugPayloads: false, maxLabelPairs: 1000 });
  expect(telemetrySettings(parseConfig('telemetry: { max_label_pairs: 20 }', 'c.yaml'))).toEqual({ debugPayloads: false, maxLabelPairs: 20 });
  expect(() => telemetrySettings(parseConfig('telemetry: { max_label_pairs: -1 }', 'c.yaml'))).toThrow('c.yaml: telemetry.max_label_pairs: must be an integer >= 0');
  expect(() => telemetrySettings(parseConfig('telemetry: { max_label_pairs: "many" }', 'c.yaml'))).toThrow('c.yaml: telemetry.max_label_pairs: must be an integer >= 0');
  expect(() => telemetrySettings(parseConfig('telemetry: { debug: true }', 'c.yaml'))).toThrow('c.yaml: telemetry.debug: unknown key (expected one of debug_payloads, max_label_pairs)');
  expect(() => telemetrySettings(parseConfig('telemetry: { debug_payloads: "yes" }', 'c.yaml'))).toThrow('c.yaml: telemetry.debug_payloads: must be true or false');
  expect(() => telemetrySettings(parseConfig('telemetry: [1]', 'c.yaml'))).toThrow('c.yaml: telemetry: must be a mapping');
});

test('the metrics address is HOST:PORT', () => {
  expect(parseHostPort('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 });
  expect(parseHostPort('[::1]:0')).toEqual({ host: '::1', port: 0 });
  expect(() => parseHostPort('9464')).toThrow('--metrics-listen must be HOST:PORT, got "9464"');
  expect(() => parseHostPort('h:99999')).toThrow('--metrics-listen must be HOST:PORT, got "h:99999"');
});
