import type { Attributes, AttributeValue, SpanKind } from '@opentelemetry/api';
import { newSpanId, newTraceId, type TraceContext } from './trace-context';

/** What the observers do with a span that records (the tracing side implements it). */
export interface RecordingSpan {
  /** True until the span ends. */
  isRecording(): boolean;
  setAttribute(key: string, value: AttributeValue): void;
  /** Marks the span failed, with the error type as its status message. */
  setError(message: string): void;
  /** A point event at `timeMs` (epoch milliseconds). */
  addEvent(name: string, attributes: Attributes, timeMs: number): void;
  /**
   * Ends the span at `endMs` and hands it to export; `startMs`, when later than the span's start,
   * becomes its start (a parallel call observed from its turn's start ran when its wave started it).
   */
  end(endMs: number, startMs?: number): void;
}

/** A span as events see it: its ids and start, and the recording span when traced. */
export interface SpanRecord extends TraceContext {
  readonly parentSpanId: string;
  readonly name: string;
  readonly startMs: number;
  readonly span?: RecordingSpan;
}

/** How to start a span. */
export interface SpanStart {
  readonly name: string;
  readonly kind: SpanKind;
  readonly startMs: number;
  readonly attributes?: Attributes;
  /** The span will have children. @default false */
  readonly parent?: boolean;
}

/** Makes the spans that are exported: one that records, or ids only when the sampler drops it. */
export interface SpanTracer {
  start(parent: SpanRecord | TraceContext | undefined, start: SpanStart): SpanRecord;
}

const NOT_SAMPLED = '00';

/**
 * A span of ids only (no recording). Its ids are drawn when first read, and most never are: they
 * show in events only while someone subscribes, and in a traceparent only for tools that take one.
 * A sampler that dropped the span gives the trace id it decided on, and the flags to propagate.
 */
export class IdSpan implements SpanRecord {
  private id: string | undefined;

  constructor(
    private readonly parent: SpanRecord | TraceContext | undefined,
    readonly name: string,
    readonly startMs: number,
    private trace?: string,
    private readonly sampledFlags?: string,
  ) {}

  get traceId(): string {
    return (this.trace ??= this.parent?.traceId ?? newTraceId());
  }

  get spanId(): string {
    return (this.id ??= newSpanId());
  }

  get parentSpanId(): string {
    return this.parent?.spanId ?? '';
  }

  get flags(): string {
    return this.sampledFlags ?? this.parent?.flags ?? NOT_SAMPLED;
  }
}

/**
 * Starts a span under `parent` (a span of this process, or a caller's trace context). Without a
 * tracer only ids are made: events keep their span shape and the trace still propagates.
 */
export function startSpan(tracer: SpanTracer | undefined, parent: SpanRecord | TraceContext | undefined, start: SpanStart): SpanRecord {
  return tracer ? tracer.start(parent, start) : new IdSpan(parent, start.name, start.startMs);
}

/**
 * The trace context an attempt passes to its executor. With a tracer, the attempt's span: it is
 * exported, or the sampler dropped it and its flags say so. Without one no span of this process
 * is exported, so a tool that traces would hang its spans under a parent no trace shows: it gets
 * the caller's context (its valid traceparent, only the sampled flag kept), as an OpenTelemetry
 * that only propagates would pass it on; events still carry ids of their own. With no caller
 * either, the attempt's ids: a trace of its own, not sampled.
 */
export function executorContext(tracer: SpanTracer | undefined, caller: TraceContext | undefined, attempt: () => SpanRecord): TraceContext {
  return tracer === undefined && caller !== undefined ? caller : attempt();
}

/** True when the span records, so its attributes are worth building. */
export const isRecording = (record: SpanRecord): boolean => record.span?.isRecording() === true;

/**
 * Ends the span with its final attributes; an `errorType` sets the error status; a later `startMs`
 * moves its start (see {@link RecordingSpan.end}). Always ends.
 */
export function endSpan(record: SpanRecord, endMs: number, attributes: Attributes | undefined, errorType?: string, startMs?: number): void {
  const span = record.span;
  if (!span) return;
  try {
    for (const key in attributes) {
      const value = attributes[key];
      if (value !== undefined) span.setAttribute(key, value);
    }
    if (errorType !== undefined) span.setError(errorType);
  } finally {
    span.end(endMs, startMs);
  }
}
