import { SpanKind } from '@opentelemetry/api';
import { requestFrame } from '../../src/telemetry/otlp-request';
import type { SpanData } from '../../src/telemetry/otlp-span-encoding';
import { decodeExportTraceRequest } from './otlp-receiver';
import { batchOptionsFromEnv, SpanBatcher, type BatchExporter, type EncodedBatch } from '../../src/telemetry/span-batcher';

// The batcher against an exporter that records what it is given; the real OTLP/HTTP transport
// is exercised end to end, against a real receiver, in traces.test.ts (its dynamic import of
// node:http does not run inside jest's module sandbox).

const frame = requestFrame({ attributes: { 'service.name': 'batcher-test' } }, { name: 'dispatch' });
const T0 = 1_764_500_000_000;
let n = 0;
const span = (): SpanData => ({
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: (++n).toString(16).padStart(16, '0'),
  parentSpanId: '',
  remoteParent: false,
  name: `span ${n}`,
  kind: SpanKind.INTERNAL,
  startMs: T0,
  endMs: T0 + 1,
  attributes: { i: n },
  endAttributes: undefined,
  errorMessage: undefined,
  events: undefined,
  droppedEventsCount: 0,
});

/** An exporter whose exports finish when the test says, or fail. */
function recorder() {
  const batches: EncodedBatch[] = [];
  const pending: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  let manual = false;
  const exporter: BatchExporter & { batches: EncodedBatch[]; hold(): void; release(error?: Error): void; shutdowns: number } = {
    batches,
    shutdowns: 0,
    export: (batch) =>
      new Promise<void>((resolve, reject) => {
        batches.push(batch);
        if (manual) pending.push({ resolve, reject });
        else resolve();
      }),
    shutdown: async () => void exporter.shutdowns++,
    hold: () => void (manual = true),
    release(error) {
      manual = false;
      for (const p of pending.splice(0)) error ? p.reject(error) : p.resolve();
    },
  };
  return exporter;
}

/** The span names a batch holds, as the test OTLP receiver decodes them. */
const namesIn = (batch: EncodedBatch): string[] => decodeExportTraceRequest(batch.bytes).map((s) => s.name);

const options = { scheduleDelayMs: 60_000, maxQueueSize: 10, maxExportBatchSize: 4, exportTimeoutMs: 1_000 };

test('a full batch is sent at once, as one request of its spans in order', async () => {
  const exporter = recorder();
  const batcher = new SpanBatcher(frame, exporter, options);
  for (let i = 0; i < 9; i++) batcher.append(span());
  await new Promise((r) => setImmediate(r));
  expect(exporter.batches.map((b) => b.spans)).toEqual([4, 4]);
  expect(namesIn(exporter.batches[0]!)).toEqual([`span ${n - 8}`, `span ${n - 7}`, `span ${n - 6}`, `span ${n - 5}`]);
  await batcher.forceFlush();
  expect(exporter.batches.map((b) => b.spans)).toEqual([4, 4, 1]);
});

test('a batch that is not full is sent after the schedule delay', async () => {
  const exporter = recorder();
  const batcher = new SpanBatcher(frame, exporter, { ...options, scheduleDelayMs: 50 });
  batcher.append(span());
  batcher.append(span());
  expect(exporter.batches).toHaveLength(0);
  await new Promise((r) => setTimeout(r, 150));
  expect(exporter.batches.map((b) => b.spans)).toEqual([2]);
});

test('spans beyond the queue size wait for nothing: they are dropped and counted while an export is slow', async () => {
  const exporter = recorder();
  exporter.hold();
  const batcher = new SpanBatcher(frame, exporter, options);
  for (let i = 0; i < 15; i++) batcher.append(span());
  expect(batcher.dropped).toBe(5);
  expect(exporter.batches).toHaveLength(1);
  exporter.release();
  await batcher.forceFlush();
  expect(exporter.batches.map((b) => b.spans)).toEqual([4, 4, 2]);
  batcher.append(span());
  expect(batcher.dropped).toBe(5);
});

test('a failed export is logged and counted, and later batches still go', async () => {
  const exporter = recorder();
  const warnings: string[] = [];
  const logger = { warn: (message: string) => warnings.push(message), info: () => undefined, error: () => undefined, debug: () => undefined } as never;
  exporter.hold();
  const batcher = new SpanBatcher(frame, exporter, options, logger);
  for (let i = 0; i < 4; i++) batcher.append(span());
  exporter.release(new Error('collector said 400'));
  await batcher.forceFlush();
  expect(batcher.failedBatches).toBe(1);
  expect(warnings).toEqual(['trace export failed; its spans are lost']);
  for (let i = 0; i < 4; i++) batcher.append(span());
  await batcher.forceFlush();
  expect(exporter.batches).toHaveLength(2);
});

test('an export that never answers is given up after the export timeout', async () => {
  const exporter = recorder();
  exporter.hold();
  const batcher = new SpanBatcher(frame, exporter, { ...options, exportTimeoutMs: 50 });
  for (let i = 0; i < 4; i++) batcher.append(span());
  await batcher.forceFlush();
  expect(batcher.failedBatches).toBe(1);
});

test('shutdown flushes, stops the exporter, and ignores later spans', async () => {
  const exporter = recorder();
  const batcher = new SpanBatcher(frame, exporter, options);
  batcher.append(span());
  await batcher.shutdown();
  batcher.append(span());
  await batcher.forceFlush();
  expect(exporter.batches.map((b) => b.spans)).toEqual([1]);
  expect(exporter.shutdowns).toBe(1);
});

/** A logger keeping its warnings, as `message {fields}`. */
function warningsLogger() {
  const warnings: string[] = [];
  const logger = { warn: (message: string, fields: unknown) => warnings.push(`${message} ${JSON.stringify(fields)}`), info: () => undefined, error: () => undefined, debug: () => undefined } as never;
  return { warnings, logger };
}

test('shutdown waits at most its flush time for an export that never answers, logs the spans lost, and stops retrying first', async () => {
  const exporter = recorder();
  let stopRetrying = 0;
  exporter.stopRetrying = () => void stopRetrying++;
  const { warnings, logger } = warningsLogger();
  exporter.hold();
  const batcher = new SpanBatcher(frame, exporter, { ...options, exportTimeoutMs: 60_000 }, logger, 100);
  for (let i = 0; i < 6; i++) batcher.append(span());
  const started = Date.now();
  const first = batcher.shutdown();
  const second = batcher.shutdown();
  await second;
  expect(Date.now() - started).toBeLessThan(1_000);
  expect(stopRetrying).toBe(1);
  expect(exporter.shutdowns).toBe(1);
  expect(warnings).toEqual(['trace export did not finish at shutdown; the spans not exported by then are lost {"spans":6,"waitedMs":100}']);
  await first;
  // The batch held past the deadline is not followed by the one still waiting.
  exporter.release();
  await new Promise((r) => setImmediate(r));
  expect(exporter.batches.map((b) => b.spans)).toEqual([4]);
  await batcher.shutdown();
  expect(exporter.shutdowns).toBe(1);
});

test('the OTEL_BSP_* variables set the batch, as the SDK reads them', () => {
  expect(batchOptionsFromEnv({})).toEqual({ scheduleDelayMs: 5_000, maxQueueSize: 2_048, maxExportBatchSize: 512, exportTimeoutMs: 30_000 });
  expect(batchOptionsFromEnv({ OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '500', OTEL_BSP_EXPORT_TIMEOUT: 'soon' })).toEqual({
    scheduleDelayMs: 200,
    maxQueueSize: 100,
    maxExportBatchSize: 100,
    exportTimeoutMs: 30_000,
  });
});
