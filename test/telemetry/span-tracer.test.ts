import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BasicTracerProvider, InMemorySpanExporter, ParentBasedSampler, SimpleSpanProcessor, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base';
import { endSpan, IdSpan, type SpanRecord, type SpanStart } from '../../src/events/span-record';
import { RequestWriter, requestFrame } from '../../src/telemetry/otlp-request';
import type { SpanData } from '../../src/telemetry/otlp-span-encoding';
import { createSpanTracer, MAX_SPAN_EVENTS } from '../../src/telemetry/span-tracer';
import { samplerFromEnv } from '../../src/telemetry/sampler-from-env';

const resource = resourceFromAttributes({ 'service.name': 'dispatchd-test', 'service.instance.id': 'pod-ü-1', 'process.pid': 4242, 'host.arch.bits': 64.5, 'debug': true, 'host.ip': ['127.0.0.1', '::1'] });
const scope = { name: 'dispatch', version: '0.1.0' };

function tracerWith(sampler: Sampler = new AlwaysOnSampler()) {
  const ended: SpanData[] = [];
  const tracer = createSpanTracer({ sampler, sink: { append: (span) => ended.push(span) } });
  return { tracer, spans: () => ended };
}

/** Equal hex strings; on a difference, shows where (the strings are long). */
function expectSameBytes(actual: string, expected: string): void {
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at++;
  const around = (hex: string) => `byte ${at / 2}: …${hex.slice(Math.max(0, at - 40), at + 40)}… (${hex.length / 2} bytes)`;
  expect(around(actual)).toBe(around(expected));
}

/** Our spans as the exporter would send them: one request of one resource and scope. */
function encode(spans: readonly SpanData[]): string {
  const request = new RequestWriter(requestFrame(resource, scope), 64);
  for (const span of spans) request.append(span);
  return request.finish().toString('hex');
}

const T0 = 1_764_500_000_123.456;
const start = (name: string, kind: SpanKind, startMs: number, attributes?: Attributes): SpanStart => ({ name, kind, startMs, attributes });

test('spans encode to the same OTLP bytes as the OpenTelemetry SDK’s spans with the same ids and content', () => {
  const { tracer, spans } = tracerWith();
  const caller = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', flags: '01' };
  const longText = 'x'.repeat(200) + 'é'.repeat(9_000);
  const turn = tracer.start(caller, start('dispatch.turn', SpanKind.SERVER, T0, { 'dispatch.tenant': 't', 'dispatch.calls': 2 }));
  const call = tracer.start(turn, start('execute_tool echo', SpanKind.INTERNAL, T0 + 0.25, { 'gen_ai.tool.name': 'echo', skipped: undefined }));
  const attempt = tracer.start(call, start('tool_attempt echo', SpanKind.CLIENT, T0 + 0.5, { 'dispatch.attempt': 1, 'dispatch.ratio': 0.25, 'dispatch.big': 2 ** 40, 'dispatch.neg': -3 }));
  attempt.span!.addEvent('retry', { 'dispatch.reason': 'timeout' }, T0 + 1.75);
  attempt.span!.addEvent('loop_warning', { 'dispatch.message': longText }, T0 + 1.8);
  endSpan(attempt, T0 + 2.125, { 'dispatch.outcome': 'TIMEOUT', 'dispatch.replay': false, absent: undefined, 'dispatch.attempt': 2 }, 'TIMEOUT');
  endSpan(call, T0 + 3, { 'dispatch.outcome': 'ok', 'dispatch.attempts': 2, 'dispatch.note': longText });
  endSpan(turn, T0 + 3.5, undefined);
  const ours = spans();
  expect(ours.map((s) => s.name)).toEqual(['tool_attempt echo', 'execute_tool echo', 'dispatch.turn']);

  // The SDK makes the same spans with the same ids (its id generator replays ours).
  const spanIds = [turn.spanId, call.spanId, attempt.spanId];
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource,
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    idGenerator: { generateTraceId: () => caller.traceId, generateSpanId: () => spanIds.shift()! },
  });
  const sdk = provider.getTracer(scope.name, scope.version);
  const remote = trace.setSpanContext(ROOT_CONTEXT, { traceId: caller.traceId, spanId: caller.spanId, traceFlags: 1, isRemote: true });
  const sTurn = sdk.startSpan('dispatch.turn', { kind: SpanKind.SERVER, startTime: T0, attributes: { 'dispatch.tenant': 't', 'dispatch.calls': 2 } }, remote);
  const sCall = sdk.startSpan('execute_tool echo', { kind: SpanKind.INTERNAL, startTime: T0 + 0.25, attributes: { 'gen_ai.tool.name': 'echo' } }, trace.setSpan(ROOT_CONTEXT, sTurn));
  const sAttempt = sdk.startSpan('tool_attempt echo', { kind: SpanKind.CLIENT, startTime: T0 + 0.5, attributes: { 'dispatch.attempt': 1 } }, trace.setSpan(ROOT_CONTEXT, sCall));
  sAttempt.setAttributes({ 'dispatch.ratio': 0.25, 'dispatch.big': 2 ** 40, 'dispatch.neg': -3 });
  sAttempt.addEvent('retry', { 'dispatch.reason': 'timeout' }, T0 + 1.75);
  sAttempt.addEvent('loop_warning', { 'dispatch.message': longText }, T0 + 1.8);
  sAttempt.setAttribute('dispatch.outcome', 'TIMEOUT');
  sAttempt.setAttribute('dispatch.replay', false);
  sAttempt.setAttribute('dispatch.attempt', 2);
  sAttempt.setStatus({ code: SpanStatusCode.ERROR, message: 'TIMEOUT' });
  sAttempt.end(T0 + 2.125);
  sCall.setAttribute('dispatch.outcome', 'ok');
  sCall.setAttribute('dispatch.attempts', 2);
  sCall.setAttribute('dispatch.note', longText);
  sCall.end(T0 + 3);
  sTurn.end(T0 + 3.5);
  const reference = exporter.getFinishedSpans();
  expectSameBytes(encode(ours), Buffer.from(ProtobufTraceSerializer.serializeRequest(reference)!).toString('hex'));
});

test('a span under a span of this process records without asking the sampler again; ending twice exports once', () => {
  let asked = 0;
  const always = new AlwaysOnSampler();
  const sampler: Sampler = { shouldSample: () => (asked++, always.shouldSample()), toString: () => 'counting' };
  const { tracer, spans } = tracerWith(sampler);
  const root = tracer.start(undefined, start('root', SpanKind.SERVER, T0));
  const child = tracer.start(root, start('child', SpanKind.INTERNAL, T0 + 1));
  expect(asked).toBe(1);
  expect(child.traceId).toBe(root.traceId);
  expect(child.parentSpanId).toBe(root.spanId);
  expect([root.flags, child.flags]).toEqual(['01', '01']);
  child.span!.end(T0 + 2);
  child.span!.end(T0 + 3);
  child.span!.setAttribute('late', 1);
  expect(spans()).toHaveLength(1);
  expect(spans()[0]!.endAttributes).toBeUndefined();
  expect(spans()[0]).toMatchObject({ parentSpanId: root.spanId, remoteParent: false, endMs: T0 + 2 });
});

test('a dropped span carries the trace id the sampler decided on and unsampled flags, and records nothing', () => {
  const { tracer, spans } = tracerWith(new TraceIdRatioBasedSampler(0));
  const root = tracer.start(undefined, start('root', SpanKind.SERVER, T0));
  expect(root).toBeInstanceOf(IdSpan);
  expect(root.span).toBeUndefined();
  expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(root.flags).toBe('00');
  const child = tracer.start(root, start('child', SpanKind.INTERNAL, T0));
  expect(child.traceId).toBe(root.traceId);
  expect(child.span).toBeUndefined();
  expect(spans()).toHaveLength(0);
});

test('the parent-based default follows a caller’s sampled flag, and a sampled caller’s span is a remote parent', () => {
  const { tracer, spans } = tracerWith(samplerFromEnv({}));
  const unsampled = tracer.start({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), flags: '00' }, start('turn', SpanKind.SERVER, T0));
  expect(unsampled.span).toBeUndefined();
  expect([unsampled.traceId, unsampled.parentSpanId, unsampled.flags]).toEqual(['1'.repeat(32), '2'.repeat(16), '00']);
  const sampled = tracer.start({ traceId: '3'.repeat(32), spanId: '4'.repeat(16), flags: '01' }, start('turn', SpanKind.SERVER, T0));
  sampled.span!.end(T0 + 1);
  expect(spans()[0]).toMatchObject({ traceId: '3'.repeat(32), parentSpanId: '4'.repeat(16), remoteParent: true });
  // A span of ids made here without a tracer is a local parent, unsampled: its children are too.
  const local: SpanRecord = new IdSpan(undefined, 'ids', T0);
  expect(tracer.start(local, start('child', SpanKind.INTERNAL, T0)).span).toBeUndefined();
});

test('a span keeps at most the default count of point events and counts the rest as dropped', () => {
  const { tracer, spans } = tracerWith();
  const span = tracer.start(undefined, start('busy', SpanKind.INTERNAL, T0));
  for (let i = 0; i < MAX_SPAN_EVENTS + 3; i++) span.span!.addEvent('retry', { i }, T0 + i);
  span.span!.end(T0 + 1_000);
  const [exported] = spans();
  expect(exported!.events).toHaveLength(MAX_SPAN_EVENTS);
  expect(exported!.droppedEventsCount).toBe(3);
  expect(exported!.endMs - exported!.startMs).toBe(1_000);
});

test('the standard sampler variables choose the SDK’s samplers; bad values fall back with a warning', () => {
  const warnings: string[] = [];
  const logger = { warn: (message: string) => warnings.push(message), info: () => undefined, error: () => undefined, debug: () => undefined } as never;
  expect(samplerFromEnv({}).toString()).toBe(new ParentBasedSampler({ root: new AlwaysOnSampler() }).toString());
  expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_off' }).toString()).toBe('AlwaysOffSampler');
  expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).toString()).toBe('TraceIdRatioBased{0.25}');
  expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }).toString()).toContain('TraceIdRatioBased{0.1}');
  expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '7' }, logger).toString()).toBe('TraceIdRatioBased{1}');
  expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, logger).toString()).toContain('AlwaysOnSampler');
  expect(warnings).toHaveLength(2);
});
