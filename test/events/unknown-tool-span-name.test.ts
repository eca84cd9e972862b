import { DispatchMode, EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, type TestDispatch } from '../helpers/servers';
import { ECHO_TOOL_YAML, ofSession, tapEvents, turnEnded, type EventTap } from './event-tap';

// An observability probe: each made-up tool name a model sent became a span name of its own
// (`execute_tool hallucinated_tool_a4f90c6f`), a new operation in Jaeger's list and a new series
// in span metrics, where Prometheus folds such calls into tool "_unknown". A call of a name no
// tool has now has the span (and event) name `execute_tool`; gen_ai.tool.name keeps what was sent.

let d: TestDispatch;
let tap: EventTap;
beforeAll(async () => {
  d = await startApp(ECHO_TOOL_YAML);
  tap = await tapEvents(d.address);
});
afterAll(async () => {
  tap?.close();
  await d?.close();
});

test.each([
  ['sequential', DispatchMode.SEQUENTIAL],
  ['parallel', DispatchMode.PARALLEL],
])('%s: a made-up name\'s call span is execute_tool, a known tool\'s execute_tool NAME', async (what, mode) => {
  const sessionId = `names-${what}`;
  await d.dispatch.dispatch({ sessionId, mode, calls: [{ id: 'k', name: 'echo', arguments: '{}' }, { id: 'u', name: `hallucinated_${what}_x1`, arguments: '{}' }] });
  await tap.waitFor(turnEnded(sessionId));
  const received = ofSession(tap.events, sessionId).filter((e) => e.kind === EventKind.CALL_RECEIVED);
  expect(received.map((e) => [e.toolCallId, e.name])).toEqual([
    ['k', 'execute_tool echo'],
    ['u', 'execute_tool'],
  ]);
  expect(received[1]!.attributes['gen_ai.tool.name'] ?? received[1]!.tool).toBe(`hallucinated_${what}_x1`);
});
