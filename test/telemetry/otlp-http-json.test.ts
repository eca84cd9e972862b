// OTEL_EXPORTER_OTLP_PROTOCOL=http/json: dispatchd sends its spans as OTLP/JSON (before, it
// reported the value and sent protobuf). A real receiver on loopback takes JSON bodies only here,
// and reads the same six spans of a turn as over protobuf (traces.test.ts), parented under the
// caller's traceparent, with their attributes; the start-up line names the protocol.
import { createDispatchClient } from '../../src/client';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver';
import { expectTurnSpans, startTracedDaemon, startTracedTools, TRACED_TURN, traceparentOf, type TracedTools } from './traced-service';

jest.setTimeout(30_000);

let traced: TracedTools;
let receiver: OtlpReceiver;
beforeAll(async () => {
  traced = await startTracedTools();
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await traced?.close();
  await receiver?.close();
});

test.each([
  ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', '7cf92f3577b34da6a3ce929d0e0e4738'],
  ['OTEL_EXPORTER_OTLP_PROTOCOL', '8cf92f3577b34da6a3ce929d0e0e4739'],
])('http/json in %s: the spans arrive as OTLP/JSON, the same as over protobuf', async (variable, CALLER_TRACE) => {
  const server = await startTracedDaemon(traced.configFile, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, [variable]: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50' });
  const client = createDispatchClient(server.address);
  try {
    await client.dispatch(TRACED_TURN, { metadata: { traceparent: traceparentOf(CALLER_TRACE) } });
    await receiver.waitFor((spans) => spans.filter((s) => s.traceId === CALLER_TRACE).length === 6);
  } finally {
    client.close();
    await server.stop();
  }
  expectTurnSpans(receiver.spans.filter((s) => s.traceId === CALLER_TRACE));
  expect([...receiver.contentTypes]).toEqual(['application/json']);
  const line = server.d.stderr().split('\n').filter((l) => l.includes('"trace export on"')).map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(line).toEqual([expect.objectContaining({ protocol: 'http/json', endpoint: receiver.url })]);
});
