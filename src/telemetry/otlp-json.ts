import { I32, I64, LEN, VARINT } from '../wire/growing-writer';
import { Reader } from '../wire/reader';

// OTLP/JSON (the specification's "JSON Protobuf Encoding") of a batch dispatch encoded as OTLP
// protobuf (otlp-span-encoding.ts), for OTEL_EXPORTER_OTLP_PROTOCOL=http/json: read back from the
// protobuf bytes, so that the one encoder stays the only writer of spans. The JSON is what
// @opentelemetry/otlp-transformer's JsonTraceSerializer writes for the same spans
// (test/telemetry/otlp-json.test.ts compares them): lowerCamelCase names, trace and span ids as
// hex (not base64, unlike protobuf's JSON mapping), enums as integers, nanosecond timestamps as
// decimal strings, bytes values as base64. Only the messages and fields of trace export are read;
// others are skipped.

type Json = string | number | boolean | null | Json[] | { [key: string]: Json | undefined };
type JsonObject = { [key: string]: Json | undefined };

/** Reads each field of the message `r` holds, handing its tag to `on`, which reads it or returns false to skip it. */
function eachField(r: Reader, on: (field: number, wire: number) => boolean): void {
  while (r.pos < r.end) {
    const tag = r.tag();
    if (!on(tag >>> 3, tag & 7)) r.skip(tag);
  }
}

/** An int64 varint: a number when it is a safe integer (as the SDK writes JavaScript integers), else its decimal string (OTLP/JSON takes either). */
function int64(r: Reader): number | string {
  const value = BigInt.asIntN(64, r.varint64());
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

function anyValue(r: Reader): JsonObject {
  let value: JsonObject = {};
  eachField(r, (field, wire) => {
    if (field === 1 && wire === LEN) value = { stringValue: r.string() };
    else if (field === 2 && wire === VARINT) value = { boolValue: r.bool() };
    else if (field === 3 && wire === VARINT) value = { intValue: int64(r) };
    else if (field === 4 && wire === I64) value = { doubleValue: r.double() };
    else if (field === 5 && wire === LEN) value = { arrayValue: { values: repeated(r.nested(), 1, anyValue) } };
    else if (field === 6 && wire === LEN) value = { kvlistValue: { values: repeated(r.nested(), 1, keyValue) } };
    else if (field === 7 && wire === LEN) value = { bytesValue: r.bytes().toString('base64') };
    else return false;
    return true;
  });
  return value;
}

function keyValue(r: Reader): JsonObject {
  const kv: JsonObject = { key: '', value: {} };
  eachField(r, (field, wire) => {
    if (field === 1 && wire === LEN) kv.key = r.string();
    else if (field === 2 && wire === LEN) kv.value = anyValue(r.nested());
    else return false;
    return true;
  });
  return kv;
}

/** The messages of the repeated field `field` of the message `r` holds, each read by `read`. */
function repeated(r: Reader, field: number, read: (inner: Reader) => JsonObject): JsonObject[] {
  const items: JsonObject[] = [];
  eachField(r, (f, wire) => f === field && wire === LEN && items.push(read(r.nested())) > 0);
  return items;
}

function event(r: Reader): JsonObject {
  const e: JsonObject = { attributes: [], name: '', timeUnixNano: '0', droppedAttributesCount: 0 };
  const attributes: JsonObject[] = [];
  eachField(r, (field, wire) => {
    if (field === 1 && wire === I64) e.timeUnixNano = r.fixed64().toString();
    else if (field === 2 && wire === LEN) e.name = r.string();
    else if (field === 3 && wire === LEN) attributes.push(keyValue(r.nested()));
    else if (field === 4 && wire === VARINT) e.droppedAttributesCount = r.varint32();
    else return false;
    return true;
  });
  e.attributes = attributes;
  return e;
}

function status(r: Reader): JsonObject {
  const s: JsonObject = { code: 0 };
  eachField(r, (field, wire) => {
    if (field === 2 && wire === LEN) s.message = r.string();
    else if (field === 3 && wire === VARINT) s.code = r.varint32() | 0;
    else return false;
    return true;
  });
  return s;
}

/** A Span as OTLP/JSON, every field in place from the start (one shape for all: JSON.stringify and V8 keep to their fast paths). */
type JsonSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  traceState: string | undefined;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: JsonObject[];
  droppedAttributesCount: number;
  events: JsonObject[];
  droppedEventsCount: number;
  status: JsonObject;
  links: JsonObject[];
  droppedLinksCount: number;
  flags: number | undefined;
};

function span(r: Reader): JsonSpan {
  const s: JsonSpan = { traceId: '', spanId: '', parentSpanId: undefined, traceState: undefined, name: '', kind: 0, startTimeUnixNano: '0', endTimeUnixNano: '0', attributes: [], droppedAttributesCount: 0, events: [], droppedEventsCount: 0, status: { code: 0 }, links: [], droppedLinksCount: 0, flags: undefined };
  eachField(r, (field, wire) => {
    if (wire === LEN) {
      if (field === 1) s.traceId = r.bytes().toString('hex');
      else if (field === 2) s.spanId = r.bytes().toString('hex');
      else if (field === 3) s.traceState = r.string();
      else if (field === 4) s.parentSpanId = r.bytes().toString('hex');
      else if (field === 5) s.name = r.string();
      else if (field === 9) s.attributes.push(keyValue(r.nested()));
      else if (field === 11) s.events.push(event(r.nested()));
      else if (field === 13) s.links.push(link(r.nested()));
      else if (field === 15) s.status = status(r.nested());
      else return false;
    } else if (wire === VARINT) {
      if (field === 6) s.kind = r.varint32() | 0;
      else if (field === 10) s.droppedAttributesCount = r.varint32();
      else if (field === 12) s.droppedEventsCount = r.varint32();
      else if (field === 14) s.droppedLinksCount = r.varint32();
      else return false;
    } else if (wire === I64 && (field === 7 || field === 8)) {
      if (field === 7) s.startTimeUnixNano = r.fixed64().toString();
      else s.endTimeUnixNano = r.fixed64().toString();
    } else if (wire === I32 && field === 16) s.flags = r.fixed32();
    else return false;
    return true;
  });
  return s;
}

function link(r: Reader): JsonObject {
  const l: JsonObject = { attributes: [], droppedAttributesCount: 0 };
  const attributes: JsonObject[] = [];
  eachField(r, (field, wire) => {
    if (wire === LEN && (field === 1 || field === 2)) l[field === 1 ? 'traceId' : 'spanId'] = r.bytes().toString('hex');
    else if (field === 3 && wire === LEN) l.traceState = r.string();
    else if (field === 4 && wire === LEN) attributes.push(keyValue(r.nested()));
    else if (field === 5 && wire === VARINT) l.droppedAttributesCount = r.varint32();
    else if (field === 6 && wire === I32) l.flags = r.fixed32();
    else return false;
    return true;
  });
  l.attributes = attributes;
  return l;
}

function resource(r: Reader): JsonObject {
  const attributes: JsonObject[] = [];
  let dropped = 0;
  eachField(r, (field, wire) => {
    if (field === 1 && wire === LEN) attributes.push(keyValue(r.nested()));
    else if (field === 2 && wire === VARINT) dropped = r.varint32();
    else return false;
    return true;
  });
  return { attributes, droppedAttributesCount: dropped };
}

function scope(r: Reader): JsonObject {
  const s: JsonObject = { name: '' };
  const attributes: JsonObject[] = [];
  let dropped = 0;
  eachField(r, (field, wire) => {
    if (field === 1 && wire === LEN) s.name = r.string();
    else if (field === 2 && wire === LEN) s.version = r.string();
    else if (field === 3 && wire === LEN) attributes.push(keyValue(r.nested()));
    else if (field === 4 && wire === VARINT) dropped = r.varint32();
    else return false;
    return true;
  });
  // Its attributes only when it has some, as the SDK writes a scope.
  return attributes.length === 0 ? s : { ...s, attributes, droppedAttributesCount: dropped };
}

function scopeSpans(r: Reader): JsonObject {
  let of: JsonObject = { name: '' };
  const spans: JsonSpan[] = [];
  let schemaUrl: string | undefined;
  eachField(r, (field, wire) => {
    if (field === 1 && wire === LEN) of = scope(r.nested());
    else if (field === 2 && wire === LEN) spans.push(span(r.nested()));
    else if (field === 3 && wire === LEN) schemaUrl = r.string() || undefined;
    else return false;
    return true;
  });
  return { scope: of, spans, schemaUrl };
}

function resourceSpans(r: Reader): JsonObject {
  let of: JsonObject = { attributes: [], droppedAttributesCount: 0 };
  const scopes: JsonObject[] = [];
  let schemaUrl: string | undefined;
  eachField(r, (field, wire) => {
    if (field === 1 && wire === LEN) of = resource(r.nested());
    else if (field === 2 && wire === LEN) scopes.push(scopeSpans(r.nested()));
    else if (field === 3 && wire === LEN) schemaUrl = r.string() || undefined;
    else return false;
    return true;
  });
  return { resource: of, scopeSpans: scopes, schemaUrl };
}

/** The OTLP/JSON text of an ExportTraceServiceRequest given as protobuf. Throws on malformed bytes. */
export function otlpJsonOfTraces(bytes: Uint8Array): string {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return JSON.stringify({ resourceSpans: repeated(new Reader(buf), 1, resourceSpans) });
}
