import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** An attribute value as OTLP carries it. */
export type AttrValue = string | boolean | number | bigint | undefined;

/** A span decoded from an OTLP ExportTraceServiceRequest. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Record<string, AttrValue>;
  readonly events: { name: string; attributes: Record<string, AttrValue> }[];
  readonly status: { code: number; message: string };
  readonly resource: Record<string, AttrValue>;
  readonly scope: string;
}

/** Reads the fields of one length-delimited message, calling `on` for each. */
function fields(bytes: Uint8Array, on: (field: number, reader: BinaryReader, wire: WireType) => void): void {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    const before = reader.pos;
    on(field, reader, wire);
    if (reader.pos === before) reader.skip(wire, field);
  }
}

function anyValue(bytes: Uint8Array): AttrValue {
  let value: AttrValue;
  fields(bytes, (f, r) => {
    if (f === 1) value = r.string();
    else if (f === 2) value = r.bool();
    else if (f === 3) value = BigInt(r.int64());
    else if (f === 4) value = r.double();
  });
  return value;
}

function keyValue(bytes: Uint8Array, into: Record<string, AttrValue>): void {
  let key = '';
  let value: AttrValue;
  fields(bytes, (f, r) => {
    if (f === 1) key = r.string();
    else if (f === 2) value = anyValue(r.bytes());
  });
  into[key] = value;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function span(bytes: Uint8Array, resource: Record<string, AttrValue>, scope: string): ReceivedSpan {
  const s = { traceId: '', spanId: '', parentSpanId: '', name: '', kind: 0, startNs: 0n, endNs: 0n, attributes: {} as Record<string, AttrValue>, events: [] as ReceivedSpan['events'], status: { code: 0, message: '' }, resource, scope };
  fields(bytes, (f, r) => {
    if (f === 1) s.traceId = hex(r.bytes());
    else if (f === 2) s.spanId = hex(r.bytes());
    else if (f === 4) s.parentSpanId = hex(r.bytes());
    else if (f === 5) s.name = r.string();
    else if (f === 6) s.kind = r.int32();
    else if (f === 7) s.startNs = BigInt(r.fixed64());
    else if (f === 8) s.endNs = BigInt(r.fixed64());
    else if (f === 9) keyValue(r.bytes(), s.attributes);
    else if (f === 11) {
      const event = { name: '', attributes: {} as Record<string, AttrValue> };
      fields(r.bytes(), (ef, er) => {
        if (ef === 2) event.name = er.string();
        else if (ef === 3) keyValue(er.bytes(), event.attributes);
      });
      s.events.push(event);
    } else if (f === 15) {
      fields(r.bytes(), (sf, sr) => {
        if (sf === 2) s.status.message = sr.string();
        else if (sf === 3) s.status.code = sr.int32();
      });
    }
  });
  return s;
}

/** Decodes an opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest. */
export function decodeExportTraceRequest(body: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  fields(body, (f, r) => {
    if (f !== 1) return;
    const resource: Record<string, AttrValue> = {};
    const scopeSpans: Uint8Array[] = [];
    fields(r.bytes(), (rf, rr) => {
      if (rf === 1) fields(rr.bytes(), (af, ar) => (af === 1 ? keyValue(ar.bytes(), resource) : undefined));
      else if (rf === 2) scopeSpans.push(rr.bytes());
    });
    for (const ss of scopeSpans) {
      let scope = '';
      const raw: Uint8Array[] = [];
      fields(ss, (sf, sr) => {
        if (sf === 1) fields(sr.bytes(), (nf, nr) => (nf === 1 ? (scope = nr.string()) : undefined));
        else if (sf === 2) raw.push(sr.bytes());
      });
      for (const b of raw) spans.push(span(b, resource, scope));
    }
  });
  return spans;
}

type JsonKeyValue = { key: string; value: Record<string, unknown> };

/** An AnyValue of OTLP/JSON, as the protobuf decoder gives it (an int64 as a bigint, whether a number or a string in the JSON). */
function jsonAnyValue(value: Record<string, unknown>): AttrValue {
  if ('stringValue' in value) return value.stringValue as string;
  if ('boolValue' in value) return value.boolValue as boolean;
  if ('intValue' in value) return BigInt(value.intValue as string | number);
  if ('doubleValue' in value) return value.doubleValue as number;
  return undefined;
}

const jsonAttributes = (list: JsonKeyValue[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonAnyValue(kv.value)]));

/**
 * Decodes an ExportTraceServiceRequest in OTLP/JSON: ids must be hex (the specification's JSON
 * encoding, not protobuf's base64), timestamps decimal strings or numbers, enums integers.
 */
export function decodeExportTraceJson(text: string): ReceivedSpan[] {
  type JsonSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; startTimeUnixNano: string; endTimeUnixNano: string; attributes?: JsonKeyValue[]; events?: { name: string; attributes?: JsonKeyValue[] }[]; status?: { code?: number; message?: string } };
  const request = JSON.parse(text) as { resourceSpans: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans: { scope?: { name?: string }; spans: JsonSpan[] }[] }[] };
  const hex = (id: string | undefined) => {
    if (id !== undefined && !/^([0-9a-f]{2})*$/.test(id)) throw new Error(`an id that is not lowercase hex: ${id}`);
    return id ?? '';
  };
  return request.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        traceId: hex(s.traceId),
        spanId: hex(s.spanId),
        parentSpanId: hex(s.parentSpanId),
        name: s.name,
        kind: s.kind,
        startNs: BigInt(s.startTimeUnixNano),
        endNs: BigInt(s.endTimeUnixNano),
        attributes: jsonAttributes(s.attributes),
        events: (s.events ?? []).map((e) => ({ name: e.name, attributes: jsonAttributes(e.attributes) })),
        status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
        resource: jsonAttributes(rs.resource?.attributes),
        scope: ss.scope?.name ?? '',
      })),
    ),
  );
}

/** A real OTLP/HTTP trace receiver on loopback, decoding protobuf and JSON bodies. */
export interface OtlpReceiver {
  /** The traces endpoint (`.../v1/traces`). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** The content types of the requests received: application/x-protobuf, application/json. */
  readonly contentTypes: ReadonlySet<string>;
  readonly requests: number;
  /** Resolves once `predicate` holds, or rejects after `timeoutMs`. */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts the receiver on 127.0.0.1:0. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  let requests = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
      const type = req.headers['content-type'];
      if (req.url !== '/v1/traces' || (type !== 'application/x-protobuf' && type !== 'application/json')) {
        res.writeHead(415).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      contentTypes.add(type);
      if (type === 'application/json') {
        spans.push(...decodeExportTraceJson(body.toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      spans.push(...decodeExportTraceRequest(body));
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    contentTypes,
    get requests() {
      return requests;
    },
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > deadline) throw new Error(`OTLP receiver: condition not met in ${timeoutMs} ms (${spans.length} spans: ${spans.map((s) => s.name).join(', ')})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
