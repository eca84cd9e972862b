import { SpanStatusCode, type Attributes, type AttributeValue, type SpanKind } from '@opentelemetry/api';
import { I32, I64, LEN, ProtoWriter, VARINT } from '../wire/growing-writer';
import { EncodedAttributes } from './encoded-attributes';

// OTLP protobuf (opentelemetry/proto/trace/v1, collector/trace/v1) written straight from
// dispatch's span data into one growing buffer: the same bytes, field for field, as
// @opentelemetry/otlp-transformer's ProtobufTraceSerializer writes for the SDK's spans
// (test/telemetry/span-tracer.test.ts compares them), without a ReadableSpan to keep alive
// until export. Spans are encoded as they end; a batch is their bytes under one resource and scope.

/** A point event on a span. */
export interface SpanPoint {
  readonly name: string;
  readonly attributes: Attributes;
  readonly timeMs: number;
}

/** An ended span, as the encoder reads it. */
export interface SpanData {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  /** The parent is a caller's span (a traceparent), not one of this process. */
  readonly remoteParent: boolean;
  readonly name: string;
  readonly kind: SpanKind;
  readonly startMs: number;
  readonly endMs: number;
  /** Attributes at the start, then those set at the end; undefined values are left out. */
  readonly attributes: Attributes | undefined;
  readonly endAttributes: Attributes | undefined;
  /** Set: the span's status is ERROR with this message. */
  readonly errorMessage: string | undefined;
  readonly events: readonly SpanPoint[] | undefined;
  readonly droppedEventsCount: number;
  /**
   * Writes trace_id, span_id and, unless the span is a root, parent_span_id (fields 1, 2 and 4)
   * from ids the span keeps as bytes; without it they are written from the hex strings.
   */
  writeIds?(w: ProtoWriter): void;
}

/** The instrumentation scope spans are reported under. */
export interface InstrumentationScope {
  readonly name: string;
  readonly version?: string;
  readonly schemaUrl?: string;
}

/** The resource spans are reported under (OpenTelemetry's Resource, as far as OTLP reads it). */
export interface ResourceLike {
  readonly attributes: Attributes;
  readonly schemaUrl?: string;
}

const SAMPLED_HAS_IS_REMOTE = 0x101;
const IS_REMOTE = 0x200;

/** Epoch milliseconds as OpenTelemetry's [seconds, nanoseconds]. */
function hrTimeOf(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6))];
}

/** Epoch milliseconds as fixed64 nanoseconds, via the [seconds, nanos] the SDK would hold. */
function writeTime(w: ProtoWriter, ms: number): void {
  const [seconds, nanos] = hrTimeOf(ms);
  // seconds * 1e9 + nanos exceeds 2^53: split the seconds so every product stays exact (as the
  // transformer's writeHrTimeAsFixed64 does).
  const low16 = (seconds & 0xffff) * 1e9;
  const high = ((seconds / 0x10000) >>> 0) * 1e9;
  const lowSum = (low16 >>> 0) + (((high & 0xffff) * 0x10000) >>> 0) + nanos;
  w.fixed64(lowSum, Math.floor(low16 / 0x100000000) + ((high / 0x10000) >>> 0) + Math.floor(lowSum / 0x100000000));
}

const INT64_MIN = -(2 ** 63);
const INT64_END = 2 ** 63;

/** An AnyValue's fields. */
function writeAnyValue(w: ProtoWriter, value: unknown): void {
  switch (typeof value) {
    case 'string':
      w.tag(1, LEN);
      w.string(value);
      return;
    case 'boolean':
      w.tag(2, VARINT);
      w.varint(value ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(value) && value >= INT64_MIN && value < INT64_END) {
        w.tag(3, VARINT);
        w.varint(value);
      } else {
        w.tag(4, I64);
        w.double(value);
      }
      return;
  }
  if (value instanceof Uint8Array) {
    w.tag(7, LEN);
    w.bytes(value);
  } else if (Array.isArray(value)) {
    w.tag(5, LEN);
    const array = w.start();
    for (const item of value) {
      w.tag(1, LEN);
      const at = w.start();
      writeAnyValue(w, item);
      w.finish(at);
    }
    w.finish(array);
  } else if (typeof value === 'object' && value !== null) {
    w.tag(6, LEN);
    const list = w.start();
    writeKeyValues(w, 1, value as Record<string, unknown>);
    w.finish(list);
  }
}

/** Keys, names and repeated values, encoded once (the same bytes as written here). */
const ENCODED = new EncodedAttributes(writeAnyValue);

/** Repeated KeyValue under `field`; undefined values are left out, as the SDK leaves them out. */
export function writeKeyValues(w: ProtoWriter, field: number, attributes: Record<string, unknown> | undefined, skip?: Record<string, unknown>): void {
  for (const key in attributes) {
    if (!Object.prototype.hasOwnProperty.call(attributes, key)) continue;
    const value = attributes[key];
    if (value === undefined || (skip !== undefined && key in skip && skip[key] !== undefined)) continue;
    w.tag(field, LEN);
    if (ENCODED.writeKeyValue(w, key, value)) continue;
    const kv = w.start();
    w.tag(1, LEN);
    w.string(key);
    w.tag(2, LEN);
    const any = w.start();
    writeAnyValue(w, value);
    w.finish(any);
    w.finish(kv);
  }
}

/** The span's attributes in the SDK's order: start keys first, a key set again at the end keeps its place with the new value. */
function writeSpanAttributes(w: ProtoWriter, start: Attributes | undefined, end: Attributes | undefined): void {
  if (start === undefined || end === undefined) return writeKeyValues(w, 9, start ?? end);
  let overlap = false;
  for (const key in end) if (end[key] !== undefined && key in start) overlap = true;
  if (!overlap) {
    writeKeyValues(w, 9, start);
    writeKeyValues(w, 9, end);
    return;
  }
  const merged: Record<string, AttributeValue | undefined> = { ...start };
  for (const key in end) if (end[key] !== undefined) merged[key] = end[key];
  writeKeyValues(w, 9, merged);
}

/** One Span message's fields (without its tag and length). */
export function writeSpan(w: ProtoWriter, span: SpanData): void {
  if (span.writeIds) span.writeIds(w);
  else {
    w.tag(1, LEN);
    w.hexBytes(span.traceId);
    w.tag(2, LEN);
    w.hexBytes(span.spanId);
    if (span.parentSpanId !== '') {
      w.tag(4, LEN);
      w.hexBytes(span.parentSpanId);
    }
  }
  w.tag(5, LEN);
  ENCODED.writeName(w, span.name);
  w.tag(6, VARINT);
  w.varint(span.kind + 1);
  w.tag(7, I64);
  writeTime(w, span.startMs);
  w.tag(8, I64);
  writeTime(w, span.endMs);
  writeSpanAttributes(w, span.attributes, span.endAttributes);
  w.tag(10, VARINT);
  w.varint(0);
  for (const event of span.events ?? []) {
    w.tag(11, LEN);
    const at = w.start();
    w.tag(1, I64);
    writeTime(w, event.timeMs);
    w.tag(2, LEN);
    ENCODED.writeName(w, event.name);
    writeKeyValues(w, 3, event.attributes);
    w.tag(4, VARINT);
    w.varint(0);
    w.finish(at);
  }
  w.tag(12, VARINT);
  w.varint(span.droppedEventsCount);
  w.tag(14, VARINT);
  w.varint(0);
  w.tag(15, LEN);
  const status = w.start();
  if (span.errorMessage) {
    w.tag(2, LEN);
    w.string(span.errorMessage);
  }
  w.tag(3, VARINT);
  w.varint(span.errorMessage === undefined ? SpanStatusCode.UNSET : SpanStatusCode.ERROR);
  w.finish(status);
  w.tag(16, I32);
  w.fixed32(span.remoteParent ? SAMPLED_HAS_IS_REMOTE | IS_REMOTE : SAMPLED_HAS_IS_REMOTE);
}

/** Appends a span to a batch: the ScopeSpans `spans` field (tag, length, message). */
export function appendSpan(batch: ProtoWriter, span: SpanData): void {
  batch.tag(2, LEN);
  const at = batch.start();
  writeSpan(batch, span);
  batch.finish(at);
}
