// OTLP/JSON export (OTEL_EXPORTER_OTLP_PROTOCOL=http/json): dispatch reads its protobuf batch back
// as JSON (src/telemetry/otlp-json.ts). The reference is @opentelemetry/otlp-transformer's own
// JsonTraceSerializer: for the same SDK spans, the JSON made from their protobuf
// (ProtobufTraceSerializer's bytes, which dispatch's encoder writes byte for byte:
// span-tracer.test.ts) equals the JSON it writes: ids in hex, timestamps as strings, every
// attribute type, events, an error status, a remote parent, the resource and the scope.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { otlpJsonOfTraces } from '../../src/telemetry/otlp-json';
import { decodeExportTraceJson, decodeExportTraceRequest } from './otlp-receiver';

const T0 = 1_764_500_000_123.456;

function sdkSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'dispatchd-test', 'service.instance.id': 'pod-ü-1', 'process.pid': 4242, 'host.arch.bits': 64.5, debug: true, 'host.ip': ['127.0.0.1', '::1'] }),
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const sdk = provider.getTracer('dispatch', '0.1.0');
  const remote = trace.setSpanContext(ROOT_CONTEXT, { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
  const turn = sdk.startSpan('dispatch.turn', { kind: SpanKind.SERVER, startTime: T0, attributes: { 'dispatch.tenant': 't', 'dispatch.calls': 2 } }, remote);
  const call = sdk.startSpan('execute_tool echo', { kind: SpanKind.INTERNAL, startTime: T0 + 0.25, attributes: { 'gen_ai.tool.name': 'echo "quoted" \\ é' } }, trace.setSpan(ROOT_CONTEXT, turn));
  const attempt = sdk.startSpan('tool_attempt echo', { kind: SpanKind.CLIENT, startTime: T0 + 0.5 }, trace.setSpan(ROOT_CONTEXT, call));
  attempt.setAttributes({ 'dispatch.attempt': 1, 'dispatch.ratio': 0.25, 'dispatch.big': 2 ** 40, 'dispatch.neg': -3, 'dispatch.flags': [true, false], 'dispatch.sizes': [1, 2.5], 'dispatch.empty': '' });
  attempt.addEvent('retry', { 'dispatch.reason': 'timeout' }, T0 + 1.75);
  attempt.addEvent('bare', undefined, T0 + 1.8);
  attempt.setStatus({ code: SpanStatusCode.ERROR, message: 'TIMEOUT' });
  attempt.end(T0 + 2.125);
  call.end(T0 + 3);
  turn.end(T0 + 3.5);
  return exporter.getFinishedSpans();
}

test("the JSON read back from a batch's protobuf is the SDK's own OTLP/JSON of the same spans", () => {
  const spans = sdkSpans();
  const protobuf = ProtobufTraceSerializer.serializeRequest(spans)!;
  const reference = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString('utf8'));
  const ours = JSON.parse(otlpJsonOfTraces(protobuf));
  expect(ours).toEqual(reference);
  // And what a receiver reads from it is what it reads from the protobuf.
  expect(decodeExportTraceJson(otlpJsonOfTraces(protobuf))).toEqual(decodeExportTraceRequest(protobuf));
  expect(ours.resourceSpans[0].scopeSpans[0].spans[2].parentSpanId).toBe('b7ad6b7169203331');
});

test('an int64 past 2^53 is written as its decimal string; malformed bytes throw', () => {
  // ExportTraceServiceRequest { resource_spans { scope_spans { spans { attributes { key: "n", value { int_value: -2^63 } } } } } }
  const anyValue = Buffer.from([0x18, ...Array(9).fill(0x80), 0x01]);
  const kv = Buffer.concat([Buffer.from([0x0a, 1, 0x6e, 0x12, anyValue.length]), anyValue]);
  const span = Buffer.concat([Buffer.from([0x4a, kv.length]), kv]);
  const scopeSpans = Buffer.concat([Buffer.from([0x12, span.length]), span]);
  const resourceSpans = Buffer.concat([Buffer.from([0x12, scopeSpans.length]), scopeSpans]);
  const request = Buffer.concat([Buffer.from([0x0a, resourceSpans.length]), resourceSpans]);
  const json = JSON.parse(otlpJsonOfTraces(request));
  expect(json.resourceSpans[0].scopeSpans[0].spans[0].attributes).toEqual([{ key: 'n', value: { intValue: '-9223372036854775808' } }]);
  expect(() => otlpJsonOfTraces(request.subarray(0, request.length - 2))).toThrow(/premature EOF/);
});
