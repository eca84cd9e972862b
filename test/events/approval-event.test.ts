import { AlwaysOnSampler } from '@opentelemetry/sdk-trace-base';
import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { createEventBus, createEventObserver, type EventBus } from '../../src/events';
import type { ApprovalRequest } from '../../src/pipeline';
import type { SpanData } from '../../src/telemetry/otlp-span-encoding';
import { createSpanTracer } from '../../src/telemetry/span-tracer';

// APPROVAL_REQUESTED shows a subscriber the arguments that run if approved, and whether a policy
// changed them; the exported span's event carries the flag only, never argument values. A turn
// that began with nobody watching (the lean observer) still publishes it to whoever watches by
// the time the call asks: an approver's UI that (re)subscribed meanwhile learns of the wait.

const REQUEST: ApprovalRequest = { sessionId: 's', toolCallId: 'c1', tool: 'charge', arguments: '{"amount":150,"memo":"audited"}', argumentsModified: true, reason: 'large payment' };

/** Subscribes to every event of tenant `acme`; the function reads what arrived so far. */
function subscribe(bus: EventBus): () => Event[] {
  const seen: Event[] = [];
  const sub = bus.subscribe('acme', { sessionId: '' }, { wake() {}, closed() {} })!;
  return () => {
    for (let e = sub.next(); e !== undefined; e = sub.next()) seen.push(e);
    return seen;
  };
}

function traced() {
  const ended: SpanData[] = [];
  const tracer = createSpanTracer({ sampler: new AlwaysOnSampler(), sink: { append: (span) => ended.push(span) } });
  const bus = createEventBus();
  return { ended, bus, observer: createEventObserver({ bus, tracer }) };
}

const approvalPoints = (ended: SpanData[]) => ended.flatMap((span) => span.events ?? []).filter((point) => point.name === 'approval_requested');

test.each([
  ['a subscriber watched when the turn began (full observer)', true],
  ['a subscriber joined after the turn began (lean observer)', false],
])('%s: the event carries the arguments and the flag, the span only the flag', (_name, before) => {
  const { ended, bus, observer } = traced();
  const early = before ? subscribe(bus) : undefined;
  const turn = observer.turn({ tenant: 'acme', sessionId: 's', turn: 1, callCount: 1 });
  const call = turn.call({ toolCallId: 'c1', tool: 'charge', arguments: '{"amount":150}' });
  const attempt = call.attempt(1, 'charge');
  const read = early ?? subscribe(bus);
  call.approvalRequested(1, 'ap-1', 'large payment', REQUEST);
  attempt.post({ isError: false, resolvedTool: 'charge', durationMs: 1, replay: false, cached: false, truncated: false, outputChars: 2 });
  call.end(undefined, 'BLOCKED');
  turn.end();

  const events = read();
  const asked = events.filter((e) => e.kind === EventKind.APPROVAL_REQUESTED);
  expect(asked).toHaveLength(1);
  expect(asked[0]).toMatchObject({ sessionId: 's', turn: 1, toolCallId: 'c1', tool: 'charge', attempt: 1 });
  expect(asked[0]!.attributes).toMatchObject({
    'dispatch.approval_id': 'ap-1',
    'dispatch.reason': 'large payment',
    'dispatch.arguments': '{"amount":150,"memo":"audited"}',
    'dispatch.arguments.modified': 'true',
  });
  // The lean turn publishes nothing else: its subscriber joined mid-turn.
  if (!before) expect(events.map((e) => EventKind[e.kind])).toEqual(['APPROVAL_REQUESTED']);
  const points = approvalPoints(ended);
  expect(points).toHaveLength(1);
  expect(points[0]!.attributes).toEqual({ 'dispatch.approval_id': 'ap-1', 'dispatch.reason': 'large payment', 'dispatch.arguments.modified': 'true' });
});

// APPROVAL_RESOLVED: a subscriber that (re)joined while the call waited learns how the wait ended
// too, on the span its request was on; the span's point carries the same (no argument values).
test.each([
  ['full observer', true],
  ['lean observer', false],
])('%s: APPROVAL_RESOLVED follows the request on its span, and the span records it', (_name, before) => {
  const { ended, bus, observer } = traced();
  const early = before ? subscribe(bus) : undefined;
  const turn = observer.turn({ tenant: 'acme', sessionId: 's', turn: 1, callCount: 1 });
  const call = turn.call({ toolCallId: 'c1', tool: 'charge', arguments: '{"amount":150}' });
  const attempt = call.attempt(1, 'charge');
  const read = early ?? subscribe(bus);
  call.approvalRequested(1, 'ap-1', 'large payment', REQUEST);
  call.approvalResolved(1, 'ap-1', { decision: 'denied', reason: 'ask finance', decidedBy: 'acme' });
  attempt.post({ isError: true, errorKind: 'BLOCKED', resolvedTool: 'charge', durationMs: 1, replay: false, cached: false, truncated: false, outputChars: 2 });
  call.end(undefined, 'BLOCKED');
  turn.end();

  const events = read();
  const kinds = events.map((e) => EventKind[e.kind]).filter((k) => k.startsWith('APPROVAL_'));
  expect(kinds).toEqual(['APPROVAL_REQUESTED', 'APPROVAL_RESOLVED']);
  const request = events.find((e) => e.kind === EventKind.APPROVAL_REQUESTED)!;
  const resolved = events.find((e) => e.kind === EventKind.APPROVAL_RESOLVED)!;
  expect(resolved).toMatchObject({ sessionId: 's', turn: 1, toolCallId: 'c1', tool: 'charge', attempt: 1, traceId: request.traceId, spanId: request.spanId, parentSpanId: request.parentSpanId });
  expect(resolved.attributes).toEqual({ 'dispatch.attempt': '1', 'dispatch.approval_id': 'ap-1', 'dispatch.approval.decision': 'denied', 'dispatch.reason': 'ask finance', 'dispatch.approval.decided_by': 'acme' });
  const points = ended.flatMap((span) => span.events ?? []).filter((point) => point.name === 'approval_resolved');
  expect(points.map((p) => p.attributes)).toEqual([{ 'dispatch.approval_id': 'ap-1', 'dispatch.approval.decision': 'denied', 'dispatch.reason': 'ask finance', 'dispatch.approval.decided_by': 'acme' }]);
});
