import { ROOT_CONTEXT, SpanKind, trace, type Attributes } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { endSpan } from '../../src/events/span-record';
import { MAX_ENCODED_CHARS, MAX_ENCODED_KEYS, MAX_ENCODED_VALUES } from '../../src/telemetry/encoded-attributes';
import { RequestWriter, requestFrame } from '../../src/telemetry/otlp-request';
import type { SpanData } from '../../src/telemetry/otlp-span-encoding';
import { createSpanTracer } from '../../src/telemetry/span-tracer';
import { decodeExportTraceRequest } from './otlp-receiver';

// The encoder keeps the bytes of keys, names and repeated values (encoded-attributes.ts): a span
// must encode to the SDK's bytes whether its attributes come from kept bytes or are written anew,
// past every bound (values per key, keys, long values and names).

const resource = resourceFromAttributes({ 'service.name': 'encoded-attributes-test' });
const scope = { name: 'dispatch' };
const T0 = 1_764_500_000_123.25;
const TRACE = '0af7651916cd43dd8448eb211c80319c';

/** Spans of every kind of attribute value, `count` of them: some repeat (kept), some never do. */
function contents(count: number): Array<{ name: string; start: Attributes; end: Attributes }> {
  return Array.from({ length: count }, (_, i) => ({
    name: i % 3 === 0 ? `execute_tool tool-${i % 5}` : `made-up ${'n'.repeat(MAX_ENCODED_CHARS)}${i}`,
    start: {
      'rpc.system': 'grpc',
      'dispatch.session_id': `session-${i}`,
      'dispatch.tenant': `tenant-${i % (MAX_ENCODED_VALUES + 8)}`,
      'dispatch.turn': i,
      'dispatch.ratio': i / 7,
      'dispatch.text': i % 4 === 0 ? 'é'.repeat(40) : 'x'.repeat(MAX_ENCODED_CHARS + (i % 3)),
      [`key-${i % 40}`]: i % 2 === 0,
    },
    end: { 'dispatch.outcome': i % 5 === 0 ? 'TIMEOUT' : 'ok', 'dispatch.replay': false, 'dispatch.attempts': 1 + (i % 3), 'dispatch.turn': i + 1 },
  }));
}

function ours(spans: ReturnType<typeof contents>): Buffer {
  const ended: SpanData[] = [];
  const tracer = createSpanTracer({ sampler: new AlwaysOnSampler(), sink: { append: (span) => ended.push(span) } });
  const caller = { traceId: TRACE, spanId: 'b7ad6b7169203331', flags: '01' };
  for (const [i, s] of spans.entries()) endSpan(tracer.start(caller, { name: s.name, kind: SpanKind.INTERNAL, startMs: T0 + i, attributes: { ...s.start } }), T0 + i + 0.5, s.end);
  const writer = new RequestWriter(requestFrame(resource, scope), 64);
  for (const span of ended) writer.append(span);
  return writer.finish();
}

function sdks(spans: ReturnType<typeof contents>, spanIds: string[]): Buffer {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource, sampler: new AlwaysOnSampler(), spanProcessors: [new SimpleSpanProcessor(exporter)], idGenerator: { generateTraceId: () => TRACE, generateSpanId: () => spanIds.shift()! } });
  const tracer = provider.getTracer(scope.name);
  const remote = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE, spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
  for (const [i, s] of spans.entries()) {
    const span = tracer.startSpan(s.name, { kind: SpanKind.INTERNAL, startTime: T0 + i, attributes: s.start }, remote);
    span.setAttributes(s.end);
    span.end(T0 + i + 0.5);
  }
  return Buffer.from(ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!);
}

test('spans encode to the SDK’s bytes from kept bytes and past every bound, encoded once and again', () => {
  const spans = contents(3 * MAX_ENCODED_VALUES);
  for (let pass = 0; pass < 2; pass++) {
    const mine = ours(spans);
    const ids = decodeExportTraceRequest(mine).map((s) => s.spanId);
    expect(mine.toString('hex')).toBe(sdks(spans, ids).toString('hex'));
  }
});

test('keys past the kept ones are written in full', () => {
  const many = Array.from({ length: 2 }, (_, round) => ({
    name: 'wide',
    start: Object.fromEntries(Array.from({ length: MAX_ENCODED_KEYS + 10 }, (_, k) => [`wide.key.${round}.${k}`, k])),
    end: {},
  }));
  // (More attributes than the SDK's default limit of 128: compared with what was set, not with the SDK.)
  const decoded = decodeExportTraceRequest(ours(many));
  expect(decoded.map((s) => Object.fromEntries(Object.entries(s.attributes).map(([k, v]) => [k, Number(v)])))).toEqual(many.map((s) => s.start));
});
