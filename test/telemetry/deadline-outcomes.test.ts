import { status } from '@grpc/grpc-js';
import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { tapEvents, type EventTap } from '../events/event-tap';
import { startMetricsApp, type MetricsApp } from './metrics-app';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from './otlp-grpc-receiver';
import type { ReceivedSpan } from './otlp-receiver';

// A turn whose RPC deadline passes ends DEADLINE_EXCEEDED, and so do the calls it cut short: their
// spans (call and attempt), their events (TOOL_POST) and dispatch_tool_calls_total{outcome}. They
// said CANCELLED, the reason the pipeline's abort carries, while the turn alone was mapped to the
// deadline. In-process app over real gRPC, exporting over OTLP/gRPC to a real receiver, with its
// real /metrics endpoint; sequential and parallel turns.

let receiver: OtlpGrpcReceiver;
let d: MetricsApp;
let tap: EventTap;
const saved = { ...process.env };

beforeAll(async () => {
  receiver = await startOtlpGrpcReceiver();
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_BSP_SCHEDULE_DELAY: '20' });
  d = await startMetricsApp(`tools:
  - name: sleep
    effect: read_only
    concurrency_safe: true
    timeout_ms: 30000
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    builtin: { name: sleep }
`);
  tap = await tapEvents(d.address);
});
afterAll(async () => {
  tap?.close();
  await d?.close();
  process.env = saved;
  await receiver?.close();
});

/** A call's arguments: distinct per call, as identical calls of a parallel turn run in successive waves. */
const sleepArgs = (id: string) => JSON.stringify({ ms: 5000, call: id });

/** Runs a turn of `ids` that the 300 ms deadline cuts short, under trace `trace`; resolves with its calls' and attempts' spans and TOOL_POST events. */
async function cutShort(sessionId: string, trace: string, mode: 0 | 2, ids: string[]) {
  const error = await d.dispatch.dispatch({ sessionId, mode, calls: ids.map((id) => ({ id, name: 'sleep', arguments: sleepArgs(id) })) }, { metadata: { traceparent: `00-${trace}-00f067aa0ba902b7-01` }, deadlineMs: 300 }).then(
    () => undefined,
    (e: { code: number }) => e,
  );
  expect(error?.code).toBe(status.DEADLINE_EXCEEDED);
  const ofTrace = (r: OtlpGrpcReceiver) => r.spans.filter((s) => s.traceId === trace);
  // The turn's span ends last, after its calls'.
  await receiver.waitFor((r) => ofTrace(r).some((s) => s.name === 'dispatch.v1.DispatchService/Dispatch'));
  const ofSession = (events: Event[]) => events.filter((e) => e.sessionId === sessionId);
  await tap.waitFor((events) => ofSession(events).some((e) => e.kind === EventKind.TURN_END));
  const spans = ofTrace(receiver);
  const named = (name: string) => spans.filter((s) => s.name === name).sort((x, y) => String(x.attributes['gen_ai.tool.call.id']).localeCompare(String(y.attributes['gen_ai.tool.call.id'])));
  return { turn: named('dispatch.v1.DispatchService/Dispatch'), calls: named('execute_tool sleep'), attempts: named('tool_attempt sleep'), events: ofSession(tap.events) };
}

const outcomeOf = (span: ReceivedSpan) => ({ outcome: span.attributes['dispatch.outcome'], errorType: span.attributes['error.type'], status: span.status });
const DEADLINE = { outcome: 'DEADLINE_EXCEEDED', errorType: 'DEADLINE_EXCEEDED', status: { code: 2, message: 'DEADLINE_EXCEEDED' } };

test('a sequential turn past its deadline: its call, attempt, TOOL_POST and call count say DEADLINE_EXCEEDED', async () => {
  const { turn, calls, attempts, events } = await cutShort('seq', 'a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1', 0, ['s1', 's2']);
  expect(turn.map(outcomeOf)).toEqual([DEADLINE]);
  // The second call never started: only the first has spans.
  expect(calls.map(outcomeOf)).toEqual([DEADLINE]);
  expect(attempts.map(outcomeOf)).toEqual([DEADLINE]);
  const posts = events.filter((e) => e.kind === EventKind.TOOL_POST);
  expect(posts.map((e) => [e.toolCallId, e.attributes['dispatch.outcome'], e.attributes['error.type']])).toEqual([['s1', 'DEADLINE_EXCEEDED', 'DEADLINE_EXCEEDED']]);
  const end = events.find((e) => e.kind === EventKind.TURN_END)!;
  expect(end.attributes['dispatch.outcome']).toBe('DEADLINE_EXCEEDED');
});

test('a parallel turn past its deadline: every call cut short says DEADLINE_EXCEEDED, and the metrics count them so', async () => {
  const { calls, attempts, events } = await cutShort('par', 'b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2', 2, ['p1', 'p2']);
  expect(calls.map(outcomeOf)).toEqual([DEADLINE, DEADLINE]);
  expect(attempts.map(outcomeOf)).toEqual([DEADLINE, DEADLINE]);
  const posts = events.filter((e) => e.kind === EventKind.TOOL_POST).map((e) => [e.toolCallId, e.attributes['dispatch.outcome']]);
  expect(posts.sort()).toEqual([['p1', 'DEADLINE_EXCEEDED'], ['p2', 'DEADLINE_EXCEEDED']]);
  const m = await d.scrape();
  // One call of the sequential turn and two of this one; none counted CANCELLED.
  expect(m.value('dispatch_tool_calls_total', { tenant: 'default', tool: 'sleep', outcome: 'DEADLINE_EXCEEDED' })).toBe(3);
  expect(m.value('dispatch_tool_calls_total', { tenant: 'default', tool: 'sleep', outcome: 'CANCELLED' })).toBeUndefined();
});
