import { ROOT_CONTEXT, SpanStatusCode, trace, type Attributes, type Context, type Span, type SpanKind, type Tracer } from '@opentelemetry/api';
import { newSpanId, newTraceId, type TraceContext } from './trace-context';

/** A span as events see it: its ids and start, and the OpenTelemetry span when tracing is on. */
export interface SpanRecord extends TraceContext {
  readonly parentSpanId: string;
  readonly name: string;
  readonly startMs: number;
  readonly span?: Span;
  /** A context holding `span`, the explicit parent of child spans. */
  readonly context?: Context;
}

/** How to start a span. */
export interface SpanStart {
  readonly name: string;
  readonly kind: SpanKind;
  readonly startMs: number;
  readonly attributes?: Attributes;
  /** The span will have children (its context is kept for them). @default false */
  readonly parent?: boolean;
}

const NOT_SAMPLED = '00';

function parentContext(parent: SpanRecord | TraceContext | undefined): Context {
  if (parent === undefined) return ROOT_CONTEXT;
  if ('context' in parent && parent.context) return parent.context;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: parent.traceId, spanId: parent.spanId, traceFlags: parseInt(parent.flags, 16) & 1, isRemote: true });
}

/**
 * A span of ids only (no tracer). Its ids are drawn when first read, and most never are: they
 * show in events only while someone subscribes, and in a traceparent only for tools that take one.
 */
class IdSpan implements SpanRecord {
  private trace: string | undefined;
  private id: string | undefined;

  constructor(
    private readonly parent: SpanRecord | TraceContext | undefined,
    readonly name: string,
    readonly startMs: number,
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
    return this.parent?.flags ?? NOT_SAMPLED;
  }
}

/**
 * Starts a span under `parent` (a span of this process, or a caller's trace context). Without a
 * tracer only ids are made: events keep their span shape and the trace still propagates. With
 * one, the OpenTelemetry span is parented through an explicit context (no context manager).
 */
export function startSpan(tracer: Tracer | undefined, parent: SpanRecord | TraceContext | undefined, start: SpanStart): SpanRecord {
  if (!tracer) return new IdSpan(parent, start.name, start.startMs);
  const parentSpanId = parent?.spanId ?? '';
  const span = tracer.startSpan(start.name, { kind: start.kind, attributes: start.attributes, startTime: start.startMs }, parentContext(parent));
  const ids = span.spanContext();
  return {
    traceId: ids.traceId,
    spanId: ids.spanId,
    flags: (ids.traceFlags & 1) === 1 ? '01' : NOT_SAMPLED,
    parentSpanId,
    name: start.name,
    startMs: start.startMs,
    span,
    context: start.parent ? trace.setSpan(ROOT_CONTEXT, span) : undefined,
  };
}

/** True when the span records, so its attributes are worth building. */
export const isRecording = (record: SpanRecord): boolean => record.span?.isRecording() === true;

/** Ends the span with its final attributes; an `errorType` sets the error status. Always ends. */
export function endSpan(record: SpanRecord, endMs: number, attributes: Attributes | undefined, errorType?: string): void {
  const span = record.span;
  if (!span) return;
  try {
    for (const key in attributes) {
      const value = attributes[key];
      if (value !== undefined) span.setAttribute(key, value);
    }
    if (errorType !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
  } finally {
    span.end(endMs);
  }
}
