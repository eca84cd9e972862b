import { throttledWarn, type Logger } from '../log';
import { MAX_TIMER_MS } from '../options/limits';
import { settlesBefore } from '../pipeline/answer-within';
import { RequestWriter, type RequestFrame } from './otlp-request';
import type { SpanData } from './otlp-span-encoding';
import type { SpanSink } from './span-tracer';

/** An encoded ExportTraceServiceRequest and how many spans it holds. */
export interface EncodedBatch {
  readonly bytes: Uint8Array;
  readonly spans: number;
}

/** Sends one batch; rejects when the batch was not accepted. */
export interface BatchExporter {
  export(batch: EncodedBatch): Promise<void>;
  /**
   * The process is stopping: from now on each export is tried once, and a retry being waited
   * for is given up at once (its export rejects with the last failure). Optional: a transport
   * that cannot cut its retries is bounded by the batcher's shutdown timeout alone.
   */
  stopRetrying?(): void;
  shutdown(): Promise<void>;
}

/** The batch settings of OpenTelemetry's BatchSpanProcessor, with its defaults. */
export interface BatchOptions {
  /** OTEL_BSP_SCHEDULE_DELAY: the longest a span waits for its batch. @default 5000 */
  readonly scheduleDelayMs: number;
  /** OTEL_BSP_MAX_QUEUE_SIZE: spans waiting at most; beyond it new spans are dropped and counted. @default 2048 */
  readonly maxQueueSize: number;
  /** OTEL_BSP_MAX_EXPORT_BATCH_SIZE: spans per export request. @default 512 */
  readonly maxExportBatchSize: number;
  /** OTEL_BSP_EXPORT_TIMEOUT: the longest one export may take. @default 30000 */
  readonly exportTimeoutMs: number;
}

const DEFAULTS: BatchOptions = { scheduleDelayMs: 5_000, maxQueueSize: 2_048, maxExportBatchSize: 512, exportTimeoutMs: 30_000 };

/**
 * The longest shutdown takes, flushing the spans still to export and closing the exporter: a
 * collector that is away would otherwise hold a stopping process for an export timeout per
 * waiting batch (10 s each over OTLP/HTTP, up to four batches at the default queue size), past
 * Kubernetes' 30 s grace period.
 */
export const SHUTDOWN_FLUSH_MS = 5_000;

/** Buffers of sent batches kept for the next ones (fresh memory costs page faults on every batch). */
const SPARE_BUFFERS = 2;
/** The first batch buffer; it grows to the batch size and is then reused. */
const INITIAL_BATCH_BYTES = 64 * 1024;

/** Export failures and drops are logged at most this often. */
const LOG_INTERVAL_MS = 10_000;

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name]?.trim() || NaN);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

// MAX_TIMER_MS: a longer delay would time every export out at once and send every batch as its
// first span ends (setTimeout runs it after 1 ms).
export { MAX_TIMER_MS };

/** A positive duration in ms, at most {@link MAX_TIMER_MS} (a longer one is taken as that). */
const milliseconds = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => Math.min(positive(env, name, fallback), MAX_TIMER_MS);

/**
 * The OTEL_BSP_* variables; the batch size is capped by the queue size, as the SDK caps it, and the
 * schedule delay and export timeout by {@link MAX_TIMER_MS}.
 */
export function batchOptionsFromEnv(env: NodeJS.ProcessEnv): BatchOptions {
  const maxQueueSize = positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE', DEFAULTS.maxQueueSize);
  return {
    scheduleDelayMs: milliseconds(env, 'OTEL_BSP_SCHEDULE_DELAY', DEFAULTS.scheduleDelayMs),
    maxQueueSize,
    maxExportBatchSize: Math.min(maxQueueSize, positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', DEFAULTS.maxExportBatchSize)),
    exportTimeoutMs: milliseconds(env, 'OTEL_BSP_EXPORT_TIMEOUT', DEFAULTS.exportTimeoutMs),
  };
}

/**
 * Batches ended spans as OpenTelemetry's BatchSpanProcessor does (the same OTEL_BSP_* settings),
 * but as bytes: the spans that end in one turn of the event loop are encoded into the open batch
 * at its end, so no span object waits for export. A batch is sent when it is full or
 * `scheduleDelayMs` after its first span; one export runs at a time; spans beyond `maxQueueSize`
 * waiting are dropped and counted.
 */
export class SpanBatcher implements SpanSink {
  private readonly writer: RequestWriter;
  private readonly spare: Buffer[] = [];
  private waiting = 0;
  private readonly ready: Array<EncodedBatch & { readonly storage: Buffer }> = [];
  /** Spans ended in this turn of the event loop, encoded at its end (or once they fill a batch). */
  private readonly pending: SpanData[] = [];
  private encodeScheduled = false;
  private exporting: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private shutdownDone: Promise<void> | undefined;
  /** Drops and failed exports, each logged at most once per LOG_INTERVAL_MS. */
  private readonly log: (message: string, fields: Record<string, unknown>) => void;
  /** Spans dropped because the queue was full. */
  dropped = 0;
  /** Batches that failed to export (their spans are lost). */
  failedBatches = 0;

  constructor(
    frame: RequestFrame,
    private readonly exporter: BatchExporter,
    private readonly options: BatchOptions = DEFAULTS,
    private readonly logger?: Logger,
    /** The longest {@link shutdown} takes, flush and exporter close together. */
    private readonly shutdownFlushMs = SHUTDOWN_FLUSH_MS,
  ) {
    this.writer = new RequestWriter(frame, INITIAL_BATCH_BYTES);
    this.log = throttledWarn(logger, LOG_INTERVAL_MS);
  }

  append(span: SpanData): void {
    if (this.stopped) return;
    if (this.waiting >= this.options.maxQueueSize) {
      this.dropped++;
      this.log('trace spans dropped: the export queue is full (OTEL_BSP_MAX_QUEUE_SIZE)', { dropped: this.dropped });
      return;
    }
    this.pending.push(span);
    this.waiting++;
    if (this.writer.spans + this.pending.length >= this.options.maxExportBatchSize) this.encodePending();
    else if (!this.encodeScheduled) {
      this.encodeScheduled = true;
      setImmediate(this.encodeSoon);
    }
  }

  /**
   * Encodes the spans that ended since the last time, closing each batch that fills. The spans of
   * one turn of the event loop are encoded together at its end (setImmediate), so the encoder runs
   * warm instead of between every two steps of other work: with trace export on at 64 in flight,
   * 0.93-0.99x the server's CPU per call of encoding each span as it ends (four paired runs).
   * Waiting longer (128 spans or 2 ms) gained nothing more.
   */
  private encodePending(): void {
    const { pending, writer } = this;
    for (let i = 0; i < pending.length; i++) {
      writer.append(pending[i]!);
      if (writer.spans >= this.options.maxExportBatchSize) this.seal();
    }
    pending.length = 0;
    if (writer.spans > 0 && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.encodePending();
        this.seal();
      }, Math.min(this.options.scheduleDelayMs, MAX_TIMER_MS));
      this.timer.unref();
    }
  }

  private readonly encodeSoon = (): void => {
    this.encodeScheduled = false;
    this.encodePending();
  };

  /** Sends every span that ended so far; resolves when their exports are done. */
  async forceFlush(): Promise<void> {
    this.encodePending();
    this.seal();
    while (this.exporting) await this.exporting;
  }

  /**
   * Stops within `shutdownFlushMs` in all: the spans ended so far are flushed without retries,
   * then the exporter is shut down; past that time both are given up (the spans not exported by
   * then are logged with their count and dropped) and later spans are ignored. Later calls share
   * the first one's.
   */
  shutdown(): Promise<void> {
    return (this.shutdownDone ??= this.stop());
  }

  private async stop(): Promise<void> {
    const deadline = Date.now() + this.shutdownFlushMs;
    let flushed = false;
    try {
      this.exporter.stopRetrying?.();
      flushed = await settlesBefore(this.forceFlush(), deadline, false);
    } finally {
      this.stopped = true;
    }
    if (!flushed) this.logger?.warn('trace export did not finish at shutdown; the spans not exported by then are lost', { spans: this.waiting, waitedMs: this.shutdownFlushMs });
    // OpenTelemetry's HTTP transport waits for its exports in flight, retries included.
    if (!(await settlesBefore(this.exporter.shutdown(), deadline, false))) this.logger?.warn('the trace exporter did not close at shutdown; stopping without it', { waitedMs: this.shutdownFlushMs });
  }

  private seal(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const spans = this.writer.spans;
    if (spans === 0) return;
    const bytes = this.writer.finish();
    const storage = this.writer.buffer;
    this.writer.restart(this.spare.pop() ?? Buffer.allocUnsafe(storage.length));
    this.ready.push({ bytes, spans, storage });
    this.pump();
  }

  private pump(): void {
    if (this.exporting) return;
    if (this.stopped) {
      // Shutdown gave up on them.
      for (const batch of this.ready) this.waiting -= batch.spans;
      this.ready.length = 0;
      return;
    }
    const batch = this.ready.shift();
    if (!batch) return;
    this.exporting = this.send(batch).finally(() => {
      this.waiting -= batch.spans;
      this.exporting = undefined;
      this.pump();
    });
  }

  private async send(batch: EncodedBatch & { readonly storage: Buffer }): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const exported = this.exporter.export(batch);
    // Once the transport is done with the request (sent, or given up), its buffer can take a new
    // batch; not when only the timeout below gave up on it, as the transport may still be sending.
    const recycle = () => {
      if (this.spare.length < SPARE_BUFFERS) this.spare.push(batch.storage);
    };
    exported.then(recycle, recycle);
    try {
      await Promise.race([
        exported,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`export took longer than ${this.options.exportTimeoutMs} ms`)), Math.min(this.options.exportTimeoutMs, MAX_TIMER_MS));
          timer.unref();
        }),
      ]);
    } catch (error) {
      this.failedBatches++;
      this.log('trace export failed; its spans are lost', { spans: batch.spans, failedBatches: this.failedBatches, error: (error as Error).message });
    } finally {
      clearTimeout(timer);
    }
  }
}
