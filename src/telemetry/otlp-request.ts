import { LEN, ProtoWriter, VARINT } from '../wire/growing-writer';
import { varintSize } from '../wire/sized-writer';
import { appendSpan, writeKeyValues, type InstrumentationScope, type ResourceLike, type SpanData } from './otlp-span-encoding';

// An ExportTraceServiceRequest of one resource and one scope, written span by span
// (otlp-span-encoding.ts writes each span).

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
