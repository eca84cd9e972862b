import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from './otlp-grpc-receiver';
import type { ReceivedSpan } from './otlp-receiver';

// The attempt spans say when a result was an idempotent replay, a memoized read or cut short:
// `dispatch.replay`, `dispatch.cached` and `dispatch.truncated` are true exactly then (the other
// trace tests see only their false side). In-process app exporting over OTLP/gRPC to a real
// receiver that decodes the protobuf.

let tools: ToolServer;
let receiver: OtlpGrpcReceiver;
let d: TestDispatch;
let sent = 0;
const saved = { ...process.env };

beforeAll(async () => {
  tools = await startToolServer({
    '/send': (_req, res) => void res.writeHead(200).end(`sent #${++sent}`),
    '/lookup': (_req, res) => void res.writeHead(200).end('"found"'),
    '/long': (_req, res) => void res.writeHead(200).end('x'.repeat(400)),
  });
  receiver = await startOtlpGrpcReceiver();
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_BSP_SCHEDULE_DELAY: '20' });
  d = await startApp(`tools:
  - name: send
    effect: side_effect
    http: { url: "${tools.url}/send" }
  - name: lookup
    effect: read_only
    http: { url: "${tools.url}/lookup" }
  - name: long
    effect: read_only
    max_result_chars: 100
    memoize_ttl_seconds: 0
    http: { url: "${tools.url}/long" }
`);
});
afterAll(async () => {
  await d?.close();
  process.env = saved;
  await receiver?.close();
  await tools?.close();
});

/** Dispatches `name` with `args` under a trace of its own; resolves with its attempt span. */
async function attemptSpan(trace: string, name: string, args: string): Promise<ReceivedSpan> {
  await d.dispatch.dispatch({ sessionId: 'outcomes', calls: [{ id: `c-${trace.slice(0, 6)}`, name, arguments: args }] }, { metadata: { traceparent: `00-${trace}-00f067aa0ba902b7-01` } });
  const attempt = (r: OtlpGrpcReceiver) => r.spans.find((s) => s.traceId === trace && s.name === `tool_attempt ${name}`);
  await receiver.waitFor((r) => attempt(r) !== undefined);
  return attempt(receiver)!;
}

const FLAGS = ['dispatch.replay', 'dispatch.cached', 'dispatch.truncated'] as const;
const flagsOf = (span: ReceivedSpan) => Object.fromEntries(FLAGS.map((f) => [f, span.attributes[f]]));

test('an idempotent replay: dispatch.replay is true on the attempt that replayed', async () => {
  const first = await attemptSpan('11111111111111111111111111111111', 'send', '{"to":"a"}');
  const again = await attemptSpan('22222222222222222222222222222222', 'send', '{"to":"a"}');
  expect(flagsOf(first)).toEqual({ 'dispatch.replay': false, 'dispatch.cached': false, 'dispatch.truncated': false });
  expect(flagsOf(again)).toEqual({ 'dispatch.replay': true, 'dispatch.cached': false, 'dispatch.truncated': false });
  expect(sent).toBe(1);
});

test('a memoized read: dispatch.cached is true on the attempt served from the cache', async () => {
  const requests = tools.received.length;
  const first = await attemptSpan('33333333333333333333333333333333', 'lookup', '{"q":"x"}');
  const again = await attemptSpan('44444444444444444444444444444444', 'lookup', '{"q":"x"}');
  expect(flagsOf(first)).toEqual({ 'dispatch.replay': false, 'dispatch.cached': false, 'dispatch.truncated': false });
  expect(flagsOf(again)).toEqual({ 'dispatch.replay': false, 'dispatch.cached': true, 'dispatch.truncated': false });
  expect(tools.received.length - requests).toBe(1);
});

test('a result cut short: dispatch.truncated is true', async () => {
  const span = await attemptSpan('55555555555555555555555555555555', 'long', '{}');
  expect(flagsOf(span)).toEqual({ 'dispatch.replay': false, 'dispatch.cached': false, 'dispatch.truncated': true });
});
