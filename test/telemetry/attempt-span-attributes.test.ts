import { httpClientAttributes } from '../../src/events/http-client-attributes';
import { startToolServer, type ToolServer } from '../helpers/servers';
import type { ReceivedSpan } from './otlp-receiver';
import { startTracedApp, type TracedApp } from './traced-app';

// What a trace says of where an attempt went and of the RPC it served. An HTTP tool's attempt span
// carried no URL or host, and a status only when it failed: it now has the OpenTelemetry HTTP
// client attributes, its URL's credentials and query values redacted. A builtin runs in this
// process: its attempt spans were CLIENT, now INTERNAL. The turn span is the Dispatch RPC's server
// side, with `rpc.system`, `rpc.service` and `rpc.method`. In-process app exporting over OTLP/gRPC
// to a real receiver that decodes the protobuf.

let tools: ToolServer;
let app: TracedApp;
const QUERY = '?key=sk-live-4242&city=rome';

beforeAll(async () => {
  tools = await startToolServer({
    [`/weather${QUERY}`]: (_req, res) => void res.writeHead(201, { 'content-type': 'application/json' }).end('{"temp":20}'),
    '/gone': (_req, res) => void res.writeHead(404).end('no such city'),
  });
  const port = new URL(tools.url).port;
  app = await startTracedApp(`tools:
  - name: weather
    effect: read_only
    http: { url: "http://svc:hunter2@127.0.0.1:${port}/weather${QUERY}#part" }
  - name: gone
    effect: read_only
    http: { url: "${tools.url}/gone" }
  - name: echo
    effect: read_only
    builtin: { name: echo }
`);
});
afterAll(async () => {
  await app?.close();
  await tools?.close();
});

/** Dispatches one call of `name` under a trace of its own; resolves with the trace's spans once its attempt span came. */
async function traced(trace: string, name: string): Promise<{ turn: ReceivedSpan; attempt: ReceivedSpan }> {
  const { d, receiver } = app;
  await d.dispatch.dispatch({ sessionId: 'span-attributes', calls: [{ id: `c-${trace.slice(0, 6)}`, name, arguments: '{}' }] }, { metadata: { traceparent: `00-${trace}-00f067aa0ba902b7-01` } });
  const find = (span: string) => receiver.spans.find((s) => s.traceId === trace && s.name === span);
  await receiver.waitFor(() => find(`tool_attempt ${name}`) !== undefined && find('dispatch.v1.DispatchService/Dispatch') !== undefined);
  return { turn: find('dispatch.v1.DispatchService/Dispatch')!, attempt: find(`tool_attempt ${name}`)! };
}

const HTTP_KEYS = ['http.request.method', 'url.full', 'server.address', 'server.port', 'http.response.status_code'];

test("an HTTP tool's attempt span carries the HTTP client attributes, credentials and query values redacted", async () => {
  const { attempt } = await traced('a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1', 'weather');
  expect(tools.count(`/weather${QUERY}`)).toBe(1);
  expect(attempt.kind).toBe(3); // CLIENT
  expect(attempt.attributes).toMatchObject({
    'http.request.method': 'POST',
    'url.full': `http://REDACTED:REDACTED@127.0.0.1:${new URL(tools.url).port}/weather?key=REDACTED&city=REDACTED`,
    'server.address': '127.0.0.1',
    'server.port': BigInt(new URL(tools.url).port),
    'http.response.status_code': 201n,
    'dispatch.outcome': 'ok',
  });
  const text = JSON.stringify(attempt.attributes, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
  for (const secret of ['hunter2', 'svc:', 'sk-live', 'rome', '#part']) expect(text).not.toContain(secret);
});

test('a failed HTTP attempt has the status its tool answered', async () => {
  const { attempt } = await traced('b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2', 'gone');
  expect(attempt.attributes).toMatchObject({ 'url.full': `${tools.url}/gone`, 'http.response.status_code': 404n, 'error.type': 'TOOL_ERROR' });
});

test("a builtin's attempt span is INTERNAL, without HTTP attributes; the turn span is the gRPC server span of Dispatch", async () => {
  const { turn, attempt } = await traced('c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3', 'echo');
  expect(attempt.kind).toBe(1); // INTERNAL
  expect(attempt.attributes).toMatchObject({ 'dispatch.attempt': 1n, 'dispatch.effect': 'read_only', 'dispatch.outcome': 'ok' });
  for (const key of HTTP_KEYS) expect(attempt.attributes[key]).toBeUndefined();
  expect(turn.kind).toBe(2); // SERVER
  expect(turn.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.service': 'dispatch.v1.DispatchService', 'rpc.method': 'Dispatch', 'dispatch.session_id': 'span-attributes' });
});

test('a URL naming no port has its scheme\'s; an IPv6 host is its address without brackets; a bare query item (perhaps a token) is redacted whole', () => {
  expect(httpClientAttributes('https://api.example.com/v1/run?sig=abc&verbose')).toEqual({
    'http.request.method': 'POST',
    'url.full': 'https://api.example.com/v1/REDACTED?sig=REDACTED&REDACTED',
    'server.address': 'api.example.com',
    'server.port': 443,
  });
  expect(httpClientAttributes('http://[::1]/tool')).toMatchObject({ 'url.full': 'http://[::1]/tool', 'server.address': '::1', 'server.port': 80 });
  expect(httpClientAttributes('http://token@example.com:8080/x')).toMatchObject({ 'url.full': 'http://REDACTED:REDACTED@example.com:8080/x', 'server.port': 8080 });
});
