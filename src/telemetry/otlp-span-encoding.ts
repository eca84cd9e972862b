import { SpanStatusCode, type Attributes, type AttributeValue, type SpanKind } from '@opentelemetry/api';

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

const LEN = 2;
const VARINT = 0;
const I64 = 1;
const I32 = 5;
const SAMPLED_HAS_IS_REMOTE = 0x101;
const IS_REMOTE = 0x200;

/** A protobuf writer over one Buffer that grows; nested lengths are reserved as one byte and widened when needed. */
export class ProtoWriter {
  buf: Buffer;
  pos = 0;

  constructor(initial: number | Buffer = 16 * 1024) {
    this.buf = typeof initial === 'number' ? Buffer.allocUnsafe(initial) : initial;
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  varint(value: number): void {
    this.ensure(10);
    if (value < 0 || value > Number.MAX_SAFE_INTEGER) {
      let big = BigInt.asUintN(64, BigInt(value));
      while (big > 127n) {
        this.buf[this.pos++] = Number(big & 127n) | 128;
        big >>= 7n;
      }
      this.buf[this.pos++] = Number(big);
      return;
    }
    while (value > 127) {
      this.buf[this.pos++] = (value & 127) | 128;
      value = Math.floor(value / 128);
    }
    this.buf[this.pos++] = value;
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.pos = this.buf.writeUInt32LE(value >>> 0, this.pos);
  }

  /** Epoch milliseconds as fixed64 nanoseconds, via the [seconds, nanos] the SDK would hold. */
  time(ms: number): void {
    const [seconds, nanos] = hrTimeOf(ms);
    // seconds * 1e9 + nanos exceeds 2^53: split the seconds so every product stays exact (as the
    // transformer's writeHrTimeAsFixed64 does).
    const low16 = (seconds & 0xffff) * 1e9;
    const high = ((seconds / 0x10000) >>> 0) * 1e9;
    const lowSum = (low16 >>> 0) + (((high & 0xffff) * 0x10000) >>> 0) + nanos;
    const highSum = (Math.floor(low16 / 0x100000000) + ((high / 0x10000) >>> 0) + Math.floor(lowSum / 0x100000000)) >>> 0;
    this.ensure(8);
    this.buf.writeUInt32LE(lowSum >>> 0, this.pos);
    this.buf.writeUInt32LE(highSum, this.pos + 4);
    this.pos += 8;
  }

  double(value: number): void {
    this.ensure(8);
    this.pos = this.buf.writeDoubleLE(value, this.pos);
  }

  /** Reserves a one-byte length; {@link finish} writes it. */
  start(): number {
    this.ensure(1);
    return this.pos++;
  }

  finish(at: number): void {
    const length = this.pos - at - 1;
    if (length < 128) {
      this.buf[at] = length;
      return;
    }
    const extra = varintSize(length) - 1;
    this.ensure(extra);
    this.buf.copyWithin(at + 1 + extra, at + 1, this.pos);
    this.pos += extra;
    const end = this.pos;
    this.pos = at;
    this.varint(length);
    this.pos = end;
  }

  string(value: string): void {
    // Most strings here are short and ASCII: written byte by byte, with no call into C++.
    const length = value.length;
    if (length < 128) {
      this.ensure(length + 1);
      const buf = this.buf;
      let at = this.pos + 1;
      let i = 0;
      for (; i < length; i++) {
        const code = value.charCodeAt(i);
        if (code >= 0x80) break;
        buf[at++] = code;
      }
      if (i === length) {
        buf[this.pos] = length;
        this.pos = at;
        return;
      }
    }
    this.ensure(length * 3 + 1);
    const at = this.start();
    this.pos += this.buf.write(value, this.pos);
    this.finish(at);
  }

  /** Lowercase or uppercase hex digits as bytes (trace and span ids), with their length. */
  hexBytes(hex: string): void {
    const length = hex.length >>> 1;
    this.ensure(length + 1);
    const buf = this.buf;
    let at = this.pos;
    buf[at++] = length;
    for (let i = 0; i < hex.length; i += 2) buf[at++] = (HEX_VALUE[hex.charCodeAt(i)]! << 4) | HEX_VALUE[hex.charCodeAt(i + 1)]!;
    this.pos = at;
  }

  /** A length-delimited value. */
  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.raw(value);
  }

  /** Bytes already encoded, as they are. */
  raw(value: Uint8Array): void {
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** The bytes written so far, copied out. */
  copy(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }
}

/** The value of each hex digit by its char code (ids are validated hex where they enter). */
const HEX_VALUE = new Uint8Array(128);
for (let i = 0; i < 10; i++) HEX_VALUE[48 + i] = i;
for (let i = 0; i < 6; i++) HEX_VALUE[97 + i] = HEX_VALUE[65 + i] = 10 + i;

function varintSize(value: number): number {
  let size = 1;
  while (value > 127) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

/** Epoch milliseconds as OpenTelemetry's [seconds, nanoseconds]. */
function hrTimeOf(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6))];
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

/** Repeated KeyValue under `field`; undefined values are left out, as the SDK leaves them out. */
function writeKeyValues(w: ProtoWriter, field: number, attributes: Record<string, unknown> | undefined, skip?: Record<string, unknown>): void {
  for (const key in attributes) {
    if (!Object.prototype.hasOwnProperty.call(attributes, key)) continue;
    const value = attributes[key];
    if (value === undefined || (skip !== undefined && key in skip && skip[key] !== undefined)) continue;
    w.tag(field, LEN);
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
  w.tag(1, LEN);
  w.hexBytes(span.traceId);
  w.tag(2, LEN);
  w.hexBytes(span.spanId);
  if (span.parentSpanId !== '') {
    w.tag(4, LEN);
    w.hexBytes(span.parentSpanId);
  }
  w.tag(5, LEN);
  w.string(span.name);
  w.tag(6, VARINT);
  w.varint(span.kind + 1);
  w.tag(7, I64);
  w.time(span.startMs);
  w.tag(8, I64);
  w.time(span.endMs);
  writeSpanAttributes(w, span.attributes, span.endAttributes);
  w.tag(10, VARINT);
  w.varint(0);
  for (const event of span.events ?? []) {
    w.tag(11, LEN);
    const at = w.start();
    w.tag(1, I64);
    w.time(event.timeMs);
    w.tag(2, LEN);
    w.string(event.name);
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

/** The fixed parts of every request: the resource and the scope, encoded once. */
export interface RequestFrame {
  /** ResourceSpans field 1 (the Resource), with its tag and length. */
  readonly resource: Buffer;
  /** ResourceSpans field 3 (schema_url), or empty. */
  readonly resourceSchema: Buffer;
  /** ScopeSpans field 1 (the InstrumentationScope), with its tag and length. */
  readonly scope: Buffer;
  /** ScopeSpans field 3 (schema_url), or empty. */
  readonly scopeSchema: Buffer;
}

export function requestFrame(resource: ResourceLike, scope: InstrumentationScope): RequestFrame {
  const w = new ProtoWriter(1024);
  const field = (write: () => void): Buffer => {
    w.pos = 0;
    write();
    return w.copy();
  };
  return {
    resource: field(() => {
      w.tag(1, LEN);
      const at = w.start();
      writeKeyValues(w, 1, resource.attributes);
      w.tag(2, VARINT);
      w.varint(0);
      w.finish(at);
    }),
    resourceSchema: field(() => {
      if (resource.schemaUrl) (w.tag(3, LEN), w.string(resource.schemaUrl));
    }),
    scope: field(() => {
      w.tag(1, LEN);
      const at = w.start();
      w.tag(1, LEN);
      w.string(scope.name);
      if (scope.version) (w.tag(2, LEN), w.string(scope.version));
      w.finish(at);
    }),
    scopeSchema: field(() => {
      if (scope.schemaUrl) (w.tag(3, LEN), w.string(scope.schemaUrl));
    }),
  };
}

/**
 * Writes one ExportTraceServiceRequest (one resource, one scope) span by span, into one buffer:
 * room for the request's header is left in front of the first span and filled in by
 * {@link finish}, so the spans are never copied.
 */
export class RequestWriter {
  private readonly room: number;
  private readonly writer: ProtoWriter;
  /** Spans appended since the last finish. */
  spans = 0;

  constructor(
    private readonly frame: RequestFrame,
    buffer: Buffer | number = 16 * 1024,
  ) {
    // Two tags and two lengths of at most five bytes each, the resource and the scope.
    this.room = 12 + frame.resource.length + frame.scope.length;
    this.writer = new ProtoWriter(buffer);
    this.writer.pos = this.room;
  }

  append(span: SpanData): void {
    appendSpan(this.writer, span);
    this.spans++;
  }

  /** The request, a view of the buffer it was written in; that buffer is `buffer` until {@link restart}. */
  finish(): Buffer {
    const { frame, writer } = this;
    const spansBytes = writer.pos - this.room;
    writer.raw(frame.scopeSchema);
    writer.raw(frame.resourceSchema);
    const end = writer.pos;
    const scopeSpans = frame.scope.length + spansBytes + frame.scopeSchema.length;
    const resourceSpans = frame.resource.length + 1 + varintSize(scopeSpans) + scopeSpans + frame.resourceSchema.length;
    const start = this.room - (1 + varintSize(resourceSpans) + frame.resource.length + 1 + varintSize(scopeSpans) + frame.scope.length);
    writer.pos = start;
    writer.tag(1, LEN);
    writer.varint(resourceSpans);
    writer.raw(frame.resource);
    writer.tag(2, LEN);
    writer.varint(scopeSpans);
    writer.raw(frame.scope);
    return writer.buf.subarray(start, end);
  }

  /** The buffer the last request was written in (it may have grown). */
  get buffer(): Buffer {
    return this.writer.buf;
  }

  /** Starts the next request in `buffer` (a spare one, or the same once its request was sent). */
  restart(buffer: Buffer): void {
    this.writer.buf = buffer;
    this.writer.pos = this.room;
    this.spans = 0;
  }
}
