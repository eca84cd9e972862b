import { SpanKind } from '@opentelemetry/api';
import type { Logger } from '../../src/log';
import { createTracing } from '../../src/telemetry';
import { batchOptionsFromEnv, MAX_TIMER_MS } from '../../src/telemetry/span-batcher';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from './otlp-grpc-receiver';

// What the OTEL_* variables do at their edges, against a real OTLP/gRPC receiver:
// - OTEL_BSP_SCHEDULE_DELAY and OTEL_BSP_EXPORT_TIMEOUT past the longest Node timer (2^31-1 ms)
//   are taken as that. setTimeout ran them after 1 ms: every batch went at once and every export
//   timed out at once (logged and counted lost though the receiver had it).
// - OTEL_TRACES_EXPORTER=console (no otlp) leaves traces off, and says so; it said nothing.

let receiver: OtlpGrpcReceiver;
beforeAll(async () => {
  receiver = await startOtlpGrpcReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

function recordingLogger(): { logger: Logger; warnings: [string, unknown][] } {
  const warnings: [string, unknown][] = [];
  return { warnings, logger: { debug() {}, info() {}, error() {}, warn: (message, fields) => void warnings.push([message, fields]) } };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a schedule delay and export timeout past 2^31-1 ms are taken as 2^31-1 ms: spans wait for their batch, and the export is not given up at once', async () => {
  const { logger, warnings } = recordingLogger();
  const trace = 'c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3';
  const tracing = createTracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_BSP_SCHEDULE_DELAY: '3000000000', OTEL_BSP_EXPORT_TIMEOUT: '3000000000' }, logger);
  try {
    for (let i = 0; i < 3; i++) tracing.tracer!.start({ traceId: trace, spanId: '00f067aa0ba902b7', flags: '01' }, { name: `s${i}`, kind: SpanKind.INTERNAL, startMs: Date.now() }).span!.end(Date.now());
    await sleep(300);
    // Not full and not due for ~24.8 days: the batch waits.
    expect(receiver.spans.filter((s) => s.traceId === trace)).toEqual([]);
    await tracing.forceFlush();
    expect(receiver.spans.filter((s) => s.traceId === trace).map((s) => s.name)).toEqual(['s0', 's1', 's2']);
    expect(warnings).toEqual([]);
  } finally {
    await tracing.shutdown();
  }
  expect(batchOptionsFromEnv({ OTEL_BSP_SCHEDULE_DELAY: '3000000000', OTEL_BSP_EXPORT_TIMEOUT: '1e12' })).toMatchObject({ scheduleDelayMs: 2_147_483_647, exportTimeoutMs: 2_147_483_647 });
  expect(batchOptionsFromEnv({ OTEL_BSP_SCHEDULE_DELAY: '2147483647', OTEL_BSP_EXPORT_TIMEOUT: '2147483646' })).toMatchObject({ scheduleDelayMs: MAX_TIMER_MS, exportTimeoutMs: MAX_TIMER_MS - 1 });
});

test('OTEL_TRACES_EXPORTER=console turns traces off with a log line; with otlp it is ignored, with a log line', async () => {
  const off = recordingLogger();
  expect(createTracing({ OTEL_TRACES_EXPORTER: 'console' }, off.logger).tracer).toBeUndefined();
  expect(createTracing({ OTEL_TRACES_EXPORTER: 'console, zipkin', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint }, off.logger).tracer).toBeUndefined();
  expect(off.warnings).toEqual([
    ['unsupported OTEL_TRACES_EXPORTER values; traces are off (only otlp is supported)', { exporters: ['console'] }],
    ['unsupported OTEL_TRACES_EXPORTER values; traces are off (only otlp is supported)', { exporters: ['console', 'zipkin'] }],
  ]);

  // Turned off on purpose: nothing to say.
  const quiet = recordingLogger();
  expect(createTracing({ OTEL_TRACES_EXPORTER: 'none,console' }, quiet.logger).tracer).toBeUndefined();
  expect(createTracing({ OTEL_TRACES_EXPORTER: 'console', OTEL_SDK_DISABLED: 'true' }, quiet.logger).tracer).toBeUndefined();
  expect(createTracing({}, quiet.logger).tracer).toBeUndefined();
  expect(quiet.warnings).toEqual([]);

  const on = recordingLogger();
  const trace = 'd4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4';
  const tracing = createTracing({ OTEL_TRACES_EXPORTER: 'otlp,console', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }, on.logger);
  try {
    tracing.tracer!.start({ traceId: trace, spanId: '00f067aa0ba902b7', flags: '01' }, { name: 'exported', kind: SpanKind.INTERNAL, startMs: Date.now() }).span!.end(Date.now());
    await tracing.forceFlush();
    expect(receiver.spans.filter((s) => s.traceId === trace).map((s) => s.name)).toEqual(['exported']);
    expect(on.warnings).toEqual([['unsupported OTEL_TRACES_EXPORTER values ignored', { exporters: ['console'] }]]);
  } finally {
    await tracing.shutdown();
  }
});
