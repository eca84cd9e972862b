import { ROOT_CONTEXT, SamplingDecision, SpanStatusCode, trace, type Attributes, type AttributeValue, type HrTime, type Link, type SpanContext, type SpanKind, type SpanStatus } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, Sampler, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base';
import { IdSpan, type RecordingSpan, type SpanRecord, type SpanStart, type SpanTracer } from '../events/span-record';
import { newSpanId, newTraceId, type TraceContext } from '../events/trace-context';

/** Point events kept per span (OpenTelemetry's default event count limit); later ones are counted as dropped. */
export const MAX_SPAN_EVENTS = 128;

const SAMPLED = 1;
const NO_LINKS: Link[] = [];

/** Epoch milliseconds as OpenTelemetry's [seconds, nanoseconds]. */
export function hrTimeOf(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6))];
}

/** The instrumentation scope spans are reported under (OpenTelemetry's InstrumentationScope). */
export interface InstrumentationScope {
  readonly name: string;
  readonly version?: string;
  readonly schemaUrl?: string;
}

/** What every span of one tracer shares. */
interface TracerState {
  readonly processor: SpanProcessor;
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
}

/**
 * A sampled span: the record the observers hold, the handle they record through, and the
 * ReadableSpan that the batch processor and the OTLP exporter read, in one object.
 */
class ExportedSpan implements SpanRecord, RecordingSpan, ReadableSpan {
  readonly spanId = newSpanId();
  readonly flags = '01';
  readonly parentSpanId: string;
  readonly parentSpanContext: SpanContext | undefined;
  readonly startTime: HrTime;
  endTime: HrTime = [0, 0];
  duration: HrTime = [0, 0];
  ended = false;
  status: SpanStatus = { code: SpanStatusCode.UNSET };
  readonly attributes: Attributes = {};
  readonly events: TimedEvent[] = [];
  readonly links = NO_LINKS;
  droppedEventsCount = 0;
  readonly droppedAttributesCount = 0;
  readonly droppedLinksCount = 0;

  constructor(
    private readonly state: TracerState,
    readonly traceId: string,
    parent: TraceContext | undefined,
    remoteParent: boolean,
    readonly name: string,
    readonly kind: SpanKind,
    readonly startMs: number,
    attributes: Attributes | undefined,
  ) {
    this.parentSpanId = parent?.spanId ?? '';
    this.parentSpanContext = parent && { traceId: parent.traceId, spanId: parent.spanId, traceFlags: parseInt(parent.flags, 16) & SAMPLED, isRemote: remoteParent };
    this.startTime = hrTimeOf(startMs);
    for (const key in attributes) {
      const value = attributes[key];
      if (value !== undefined) this.attributes[key] = value;
    }
  }

  get span(): RecordingSpan {
    return this;
  }

  get resource(): Resource {
    return this.state.resource;
  }

  get instrumentationScope(): InstrumentationScope {
    return this.state.scope;
  }

  spanContext(): SpanContext {
    return { traceId: this.traceId, spanId: this.spanId, traceFlags: SAMPLED };
  }

  isRecording(): boolean {
    return !this.ended;
  }

  setAttribute(key: string, value: AttributeValue): void {
    if (!this.ended) this.attributes[key] = value;
  }

  setError(message: string): void {
    if (!this.ended) this.status = { code: SpanStatusCode.ERROR, message };
  }

  addEvent(name: string, attributes: Attributes, timeMs: number): void {
    if (this.ended) return;
    if (this.events.length >= MAX_SPAN_EVENTS) this.droppedEventsCount++;
    else this.events.push({ name, attributes, time: hrTimeOf(timeMs), droppedAttributesCount: 0 });
  }

  end(endMs: number): void {
    if (this.ended) return;
    this.ended = true;
    this.endTime = hrTimeOf(Math.max(endMs, this.startMs));
    const nanos = Math.round((Math.max(endMs, this.startMs) - this.startMs) * 1e6);
    this.duration = [Math.floor(nanos / 1e9), nanos % 1e9];
    this.state.processor.onEnd(this);
  }
}

/** Options of {@link createSpanTracer}. */
export interface SpanTracerOptions {
  /** Decides each trace's root span in this process; its descendants follow that decision. */
  readonly sampler: Sampler;
  /** Receives every sampled span when it ends (a BatchSpanProcessor in production). */
  readonly processor: SpanProcessor;
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
}

/**
 * Dispatch's tracer: the spans the OpenTelemetry SDK would make (same ids, names, kinds,
 * attributes, events, status, resource and scope) for the OpenTelemetry batch processor and OTLP
 * exporter, without the SDK's span objects, attribute sanitising per call and context objects,
 * which measured as most of the cost of tracing a call. The sampler is asked once per trace in
 * this process, at its first span: a span under a sampled span of this process records, as every
 * standard sampler would decide (parent-based, a ratio of the trace id, always on or off).
 */
export function createSpanTracer(options: SpanTracerOptions): SpanTracer {
  const state: TracerState = { processor: options.processor, resource: options.resource, scope: options.scope };
  const { sampler } = options;
  return {
    start(parent, start) {
      if (parent instanceof ExportedSpan) return new ExportedSpan(state, parent.traceId, parent, false, start.name, start.kind, start.startMs, start.attributes);
      // A caller's trace context (no start time) is remote; a span of ids made here is local.
      const remote = parent !== undefined && !('startMs' in parent);
      const traceId = parent?.traceId ?? newTraceId();
      const context = parent === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: parent.spanId, traceFlags: parseInt(parent.flags, 16) & SAMPLED, isRemote: remote });
      const decision = sampler.shouldSample(context, traceId, start.name, start.kind, start.attributes ?? {}, NO_LINKS);
      if (decision.decision !== SamplingDecision.RECORD_AND_SAMPLED) return new IdSpan(parent, start.name, start.startMs, traceId, '00');
      const span = new ExportedSpan(state, traceId, parent, remote, start.name, start.kind, start.startMs, start.attributes);
      if (decision.attributes) for (const key in decision.attributes) span.setAttribute(key, decision.attributes[key]!);
      return span;
    },
  };
}
