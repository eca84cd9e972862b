import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from '../telemetry/otlp-grpc-receiver';
import { tapEvents } from './event-tap';

// The caller's `traceparent` as W3C Trace Context reads it: hex in uppercase makes the header
// invalid (ignored: the turn starts a trace of its own), and of the trace flags only `sampled`
// (0x01) is passed on, the others being reserved. Both held with traces off (ids only) and on
// (exported to a real OTLP/gRPC receiver). Before, an uppercase header was lowercased and
// continued, and flags such as `ff` reached the tools as sent. With traces off the tool gets the
// caller's span as its parent: before, it got a span id of ours that no trace shows.

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

test('traces off: the tool gets the caller\'s traceparent itself, only its sampled flag kept (no span of ours is exported to be its parent)', async () => {
  expect(await forwarded(off, `00-${TRACE}-${SPAN}-01`, 'off-01')).toBe(`00-${TRACE}-${SPAN}-01`);
  expect(await forwarded(off, `00-${TRACE}-${SPAN}-ff`, 'off-ff')).toBe(`00-${TRACE}-${SPAN}-01`);
  expect(await forwarded(off, `00-${TRACE}-${SPAN}-08`, 'off-08')).toBe(`00-${TRACE}-${SPAN}-00`);
  // A later version's header with fields after the flags goes on as version 00.
  expect(await forwarded(off, `cc-${TRACE}-${SPAN}-01-later`, 'off-cc')).toBe(`00-${TRACE}-${SPAN}-01`);
});

test('traces off, watched by a subscriber: the tool gets the caller\'s traceparent, and events keep ids of their own under it', async () => {
  const tap = await tapEvents(off.address, { sessionId: 'tp' });
  try {
    expect(await forwarded(off, `00-${TRACE}-${SPAN}-01`, 'off-watched')).toBe(`00-${TRACE}-${SPAN}-01`);
    await tap.waitFor((events) => events.some((e) => e.kind === EventKind.TURN_END));
    const pre = tap.events.find((e) => e.kind === EventKind.TOOL_PRE)!;
    expect(pre.traceId).toBe(TRACE);
    expect(pre.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(pre.spanId).not.toBe(SPAN);
    expect(tap.events.find((e) => e.kind === EventKind.TURN_END)!.parentSpanId).toBe(SPAN);
  } finally {
    tap.close();
  }
});

test('traces on: the tool gets the attempt\'s span under the caller\'s trace; reserved flags are not passed on (ff goes on as 01, 08 as 00)', async () => {
  expect(await forwarded(on, `00-${TRACE}-${SPAN}-ff`, 'on-ff')).toMatch(new RegExp(`^00-${TRACE}-(?!${SPAN})[0-9a-f]{16}-01$`));
  // Not sampled by the caller: traces on follow it (parent-based), so no span records.
  expect(await forwarded(on, `00-${TRACE}-${SPAN}-08`, 'on-08')).toMatch(new RegExp(`^00-${TRACE}-(?!${SPAN})[0-9a-f]{16}-00$`));
});

describe.each([
  ['off', () => off],
  ['on', () => on],
])('traces %s', (mode, app) => {
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
