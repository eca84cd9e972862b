import { DispatchMode, EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, type TestDispatch } from '../helpers/servers';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from './otlp-grpc-receiver';
import type { ReceivedSpan } from './otlp-receiver';
import { PARALLEL_TOOLS } from './parallel-tools';

// A parallel turn observes every call from the turn's start (CALL_RECEIVED comes first, for all
// of them) and ends each once its wave is over. The execute_tool spans showed that: a quick call
// beside a 600 ms one lasted 600 ms in the trace, and a call of the next wave seemed to run beside
// the first. Each span now covers its call's own run, as its result's duration_ms does, with and
// without a subscriber (the full and the lean observer).


let receiver: OtlpGrpcReceiver;
let d: TestDispatch;
const saved = { ...process.env };

beforeAll(async () => {
  receiver = await startOtlpGrpcReceiver();
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_BSP_SCHEDULE_DELAY: '20' });
  d = await startApp(PARALLEL_TOOLS);
});
afterAll(async () => {
  await d?.close();
  process.env = saved;
  await receiver?.close();
});

const ms = (ns: bigint) => Number(ns / 1_000_000n);

/** Runs the turn under trace `trace`; resolves with its spans by name once all seven arrived. */
async function tracedTurn(trace: string, sessionId: string): Promise<Map<string, ReceivedSpan>> {
  const { results } = await d.dispatch.dispatch(
    {
      sessionId,
      mode: DispatchMode.PARALLEL,
      calls: [
        { id: 'n1', name: 'nap', arguments: '{"ms":600}' },
        { id: 'q1', name: 'quick', arguments: '{}' },
        // Not concurrency-safe: a wave of its own, after the first.
        { id: 's1', name: 'solo', arguments: '{}' },
      ],
    },
    { metadata: { traceparent: `00-${trace}-00f067aa0ba902b7-01` } },
  );
  expect(results.map((r) => r.isError)).toEqual([false, false, false]);
  const ofTrace = (r: OtlpGrpcReceiver) => r.spans.filter((s) => s.traceId === trace);
  await receiver.waitFor((r) => ofTrace(r).length >= 7);
  return new Map(ofTrace(receiver).map((s) => [s.name, s]));
}

function expectOwnRuns(spans: Map<string, ReceivedSpan>): void {
  const span = (name: string) => spans.get(name)!;
  const length = (name: string) => ms(span(name).endNs - span(name).startNs);
  expect(length('execute_tool nap')).toBeGreaterThanOrEqual(590);
  // Before: ~600 ms each, the first wave's length.
  expect(length('execute_tool quick')).toBeLessThan(250);
  expect(length('execute_tool solo')).toBeLessThan(250);
  // The second wave's call starts once the first wave is over.
  expect(span('execute_tool solo').startNs).toBeGreaterThanOrEqual(span('execute_tool nap').endNs);
  for (const tool of ['nap', 'quick', 'solo']) {
    const call = span(`execute_tool ${tool}`);
    const attempt = span(`tool_attempt ${tool}`);
    expect(attempt.parentSpanId).toBe(call.spanId);
    expect(call.startNs <= attempt.startNs && attempt.endNs <= call.endNs).toBe(true);
  }
}

test('unwatched (the lean observer): each execute_tool span covers its own call', async () => {
  expectOwnRuns(await tracedTurn('31111111111111111111111111111111', 'lean'));
});

test('watched (the full observer): the same, and the events keep their order', async () => {
  const events: Event[] = [];
  const stream = d.dispatch.subscribe({ sessionId: 'watched' });
  stream.on('data', (e: Event) => void events.push(e));
  stream.on('error', () => {});
  // Its headers come once the subscription is registered.
  await new Promise((resolve) => stream.once('metadata', resolve));
  try {
    expectOwnRuns(await tracedTurn('32222222222222222222222222222222', 'watched'));
    const kinds = events.filter((e) => e.toolCallId === 's1').map((e) => e.kind);
    expect(kinds).toEqual([EventKind.CALL_RECEIVED, EventKind.TOOL_PRE, EventKind.TOOL_POST]);
  } finally {
    stream.cancel();
  }
});
