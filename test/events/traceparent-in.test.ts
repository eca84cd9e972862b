import { json, startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from '../telemetry/otlp-grpc-receiver';

// The caller's `traceparent` as W3C Trace Context reads it: hex in uppercase makes the header
// invalid (ignored: the turn starts a trace of its own), and of the trace flags only `sampled`
// (0x01) is passed on, the others being reserved. Both held with traces off (ids only) and on
// (exported to a real OTLP/gRPC receiver). Before, an uppercase header was lowercased and
// continued, and flags such as `ff` reached the tools as sent.

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

let tools: ToolServer;
let receiver: OtlpGrpcReceiver;
let off: TestDispatch;
let on: TestDispatch;
const saved = { ...process.env };
const yaml = () => `tools:
  - name: lookup
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/lookup" }
`;

beforeAll(async () => {
  tools = await startToolServer({ '/lookup': json('found') });
  receiver = await startOtlpGrpcReceiver();
  off = await startApp(yaml());
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_BSP_SCHEDULE_DELAY: '20' });
  on = await startApp(yaml());
});
afterAll(async () => {
  await off?.close();
  await on?.close();
  process.env = saved;
  await receiver?.close();
  await tools?.close();
});

/** Dispatches one call (arguments of its own: no memoized answer) under `traceparent`; resolves with the traceparent the tool received. */
async function forwarded(d: TestDispatch, traceparent: string, id: string): Promise<string> {
  await d.dispatch.dispatch({ sessionId: 'tp', calls: [{ id, name: 'lookup', arguments: JSON.stringify({ q: id }) }] }, { metadata: { traceparent } });
  const request = tools.received.find((r) => r.body.tool_call_id === id);
  return String(request?.headers.traceparent);
}

describe.each([
  ['off', () => off],
  ['on', () => on],
])('traces %s', (mode, app) => {
  test('reserved trace flags are not passed on: ff goes on as 01, 08 as 00', async () => {
    expect(await forwarded(app(), `00-${TRACE}-${SPAN}-ff`, `${mode}-ff`)).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    // Not sampled by the caller: traces on follow it (parent-based), so neither records it.
    expect(await forwarded(app(), `00-${TRACE}-${SPAN}-08`, `${mode}-08`)).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
  });

  test('a traceparent in uppercase is ignored: the turn starts a trace of its own', async () => {
    const sent = await forwarded(app(), `00-${TRACE.toUpperCase()}-${SPAN.toUpperCase()}-01`, `${mode}-upper`);
    expect(sent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    expect(sent.slice(3, 35)).not.toBe(TRACE);
  });
});

test('with traces on, the turn under an uppercase traceparent is exported as a root of a new trace', async () => {
  const sent = await forwarded(on, `00-${TRACE}-${SPAN.toUpperCase()}-01`, 'root');
  const trace = sent.slice(3, 35);
  expect(trace).not.toBe(TRACE);
  await receiver.waitFor((r) => r.spans.some((s) => s.traceId === trace && s.name === 'dispatch.v1.DispatchService/Dispatch'));
  const turn = receiver.spans.find((s) => s.traceId === trace && s.name === 'dispatch.v1.DispatchService/Dispatch')!;
  expect(turn.parentSpanId).toBe('');
  // The caller's flags sampled spans under its ff header, and exported them under its trace.
  await receiver.waitFor((r) => r.spans.some((s) => s.traceId === TRACE && s.attributes['gen_ai.tool.call.id'] === 'on-ff'));
  expect(receiver.spans.some((s) => s.attributes['gen_ai.tool.call.id'] === 'on-08')).toBe(false);
});
