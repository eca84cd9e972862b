import { SpanKind } from '@opentelemetry/api';
import { AlwaysOnSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { RequestWriter, requestFrame } from '../../src/telemetry/otlp-request';
import type { SpanData } from '../../src/telemetry/otlp-span-encoding';
import { createSpanTracer } from '../../src/telemetry/span-tracer';
import { decodeExportTraceRequest } from './otlp-receiver';

// A new trace's id is drawn as 32-bit words and written as hex once (span-tracer.ts): the bytes
// exported must be the id its spans show (events, traceparent), for the root and its children.

test('a new trace’s exported id is the hex id its spans show, and each root draws its own', () => {
  const ended: SpanData[] = [];
  const tracer = createSpanTracer({ sampler: new AlwaysOnSampler(), sink: { append: (span) => ended.push(span) } });
  const shown: Array<{ traceId: string; spanId: string; parentSpanId: string }> = [];
  for (let i = 0; i < 50; i++) {
    const root = tracer.start(undefined, { name: 'turn', kind: SpanKind.SERVER, startMs: 1_764_500_000_000 });
    const child = tracer.start(root, { name: 'call', kind: SpanKind.INTERNAL, startMs: 1_764_500_000_001 });
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(child.traceId).toBe(root.traceId);
    shown.push({ traceId: child.traceId, spanId: child.spanId, parentSpanId: root.spanId }, { traceId: root.traceId, spanId: root.spanId, parentSpanId: '' });
    child.span!.end(1_764_500_000_002);
    root.span!.end(1_764_500_000_003);
  }
  const writer = new RequestWriter(requestFrame({ attributes: {} }, { name: 'dispatch' }), 64);
  for (const span of ended) writer.append(span);
  const exported = decodeExportTraceRequest(writer.finish()).map((s) => ({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId }));
  expect(exported).toEqual(shown);
  expect(new Set(shown.map((s) => s.traceId)).size).toBe(50);
});

test('an unsampled root still gets a trace id of 32 hex digits', () => {
  const tracer = createSpanTracer({ sampler: new TraceIdRatioBasedSampler(0), sink: { append: () => undefined } });
  const root = tracer.start(undefined, { name: 'turn', kind: SpanKind.SERVER, startMs: 0 });
  expect(root.span).toBeUndefined();
  expect(root.traceId).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
});
