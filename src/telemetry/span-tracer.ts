import { ROOT_CONTEXT, SamplingDecision, trace, type Attributes, type AttributeValue, type Link, type SpanKind } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import { IdSpan, type RecordingSpan, type SpanRecord, type SpanTracer } from '../events/span-record';
import { hexWord, randomWord, wordsHex } from '../events/trace-context';
import { LEN, type ProtoWriter } from '../wire/growing-writer';
import type { SpanData, SpanPoint } from './otlp-span-encoding';

/** Point events kept per span (OpenTelemetry's default event count limit); later ones are counted as dropped. */
export const MAX_SPAN_EVENTS = 128;

const SAMPLED = 1;
const NO_LINKS: Link[] = [];

/** Where ended spans go (the batcher, which encodes them at once). */
export interface SpanSink {
  append(span: SpanData): void;
}

/**
 * A sampled trace's id as hex and as four 32-bit words, shared by its spans in this process: the
 * words are read once, at the root, and written as bytes for every span without parsing hex back
 * (in a loop of the traced observer path, hex ids were ~18% of its time).
 */
class TraceIdWords {
  /** `text`: 32 lowercase hex digits (made here, or checked where a caller's entered); its words, when known. */
  constructor(
    readonly text: string,
    readonly w0 = hexWord(text, 0),
    readonly w1 = hexWord(text, 1),
    readonly w2 = hexWord(text, 2),
    readonly w3 = hexWord(text, 3),
  ) {}
}

/**
 * A new trace's id, drawn as words and written as hex once (the sampler reads the hex): parsing
 * the hex back into words was the largest part of starting a traced turn's spans.
 */
function newTraceIdWords(): TraceIdWords {
  let w0: number;
  let w1: number;
  let w2: number;
  let w3: number;
  do {
    w0 = randomWord();
    w1 = randomWord();
    w2 = randomWord();
    w3 = randomWord();
  } while ((w0 | w1 | w2 | w3) === 0);
  return new TraceIdWords(wordsHex(w0, w1, w2, w3), w0, w1, w2, w3);
}

/**
 * A sampled span: the record the observers hold, the handle they record through, and the data
 * the encoder reads when it ends, in one object that nothing keeps after that. Its ids are
 * 32-bit words; their hex strings are made only if read (events, a traceparent).
 */
class ExportedSpan implements SpanRecord, RecordingSpan, SpanData {
  readonly flags = '01';
  private readonly s0: number;
  private readonly s1: number;
  private readonly p0: number = 0;
  private readonly p1: number = 0;
  private idHex: string | undefined;
  endMs = 0;
  endAttributes: Record<string, AttributeValue> | undefined;
  errorMessage: string | undefined;
  events: SpanPoint[] | undefined;
  droppedEventsCount = 0;
  private ended = false;

  constructor(
    private readonly sink: SpanSink,
    readonly trace: TraceIdWords,
    /** A span of this process, a caller's span id (hex), or none for a root. */
    private readonly parent: ExportedSpan | string | undefined,
    readonly remoteParent: boolean,
    readonly name: string,
    readonly kind: SpanKind,
    /** Moved later by {@link end} when asked. */
    public startMs: number,
    /** Owned by the span from here on (span-shapes builds a new object per span). */
    readonly attributes: Attributes | undefined,
  ) {
    let s0: number;
    let s1: number;
    do {
      s0 = randomWord();
      s1 = randomWord();
    } while ((s0 | s1) === 0);
    this.s0 = s0;
    this.s1 = s1;
    if (parent instanceof ExportedSpan) {
      this.p0 = parent.s0;
      this.p1 = parent.s1;
    } else if (parent !== undefined) {
      this.p0 = hexWord(parent, 0);
      this.p1 = hexWord(parent, 1);
    }
  }

  get traceId(): string {
    return this.trace.text;
  }

  get spanId(): string {
    return (this.idHex ??= wordsHex(this.s0, this.s1));
  }

  get parentSpanId(): string {
    const parent = this.parent;
    return parent === undefined ? '' : typeof parent === 'string' ? parent : parent.spanId;
  }

  get span(): RecordingSpan {
    return this;
  }

  writeIds(w: ProtoWriter): void {
    const trace = this.trace;
    w.tag(1, LEN);
    w.idWords(trace.w0, trace.w1, trace.w2, trace.w3);
    w.tag(2, LEN);
    w.idWords(this.s0, this.s1);
    if (this.parent !== undefined) {
      w.tag(4, LEN);
      w.idWords(this.p0, this.p1);
    }
  }

  isRecording(): boolean {
    return !this.ended;
  }

  setAttribute(key: string, value: AttributeValue): void {
    if (!this.ended) (this.endAttributes ??= {})[key] = value;
  }

  setError(message: string): void {
    if (!this.ended) this.errorMessage = message;
  }

  addEvent(name: string, attributes: Attributes, timeMs: number): void {
    if (this.ended) return;
    const events = (this.events ??= []);
    if (events.length >= MAX_SPAN_EVENTS) this.droppedEventsCount++;
    else events.push({ name, attributes, timeMs });
  }

  end(endMs: number, startMs?: number): void {
    if (this.ended) return;
    this.ended = true;
    if (startMs !== undefined && startMs > this.startMs) this.startMs = startMs;
    this.endMs = Math.max(endMs, this.startMs);
    this.sink.append(this);
  }
}

/** Options of {@link createSpanTracer}. */
export interface SpanTracerOptions {
  /** Decides each trace's first span in this process; its descendants follow that decision. */
  readonly sampler: Sampler;
  /** Receives every sampled span when it ends. */
  readonly sink: SpanSink;
}

/**
 * Dispatch's tracer: the spans the OpenTelemetry SDK would make (same ids, names, kinds,
 * attributes, events, status; test/telemetry/span-tracer.test.ts compares the OTLP bytes),
 * encoded as they end, without the SDK's span objects, attribute sanitising, context objects and
 * the batch that keeps them alive until export, which measured as most of the cost of tracing a
 * call. The sampler is asked once per trace in this process, at its first span: a span under a
 * sampled span of this process records, as every standard sampler would decide (parent-based, a
 * ratio of the trace id, always on or off).
 */
export function createSpanTracer(options: SpanTracerOptions): SpanTracer {
  const { sampler, sink } = options;
  return {
    start(parent, start) {
      if (parent instanceof ExportedSpan) return new ExportedSpan(sink, parent.trace, parent, false, start.name, start.kind, start.startMs, start.attributes);
      // A caller's trace context (no start time) is remote; a span of ids made here is local.
      const remote = parent !== undefined && !('startMs' in parent);
      const root = parent === undefined ? newTraceIdWords() : undefined;
      const traceId = root?.text ?? parent!.traceId;
      const context = parent === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: parent.spanId, traceFlags: parseInt(parent.flags, 16) & SAMPLED, isRemote: remote });
      const decision = sampler.shouldSample(context, traceId, start.name, start.kind, start.attributes ?? {}, NO_LINKS);
      if (decision.decision !== SamplingDecision.RECORD_AND_SAMPLED) return new IdSpan(parent, start.name, start.startMs, traceId, '00');
      const attributes = decision.attributes ? { ...start.attributes, ...decision.attributes } : start.attributes;
      return new ExportedSpan(sink, root ?? new TraceIdWords(traceId), parent?.spanId, remote, start.name, start.kind, start.startMs, attributes);
    },
  };
}
