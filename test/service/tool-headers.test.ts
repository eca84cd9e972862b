import { create } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { createHttpExecutor, type ExecutorContext } from '../../src/executors';
import { createSchemaCompiler, resolveTool } from '../../src/registry';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// An HTTP tool's configured headers (`http: { headers }`) go with each call, but dispatch's own
// (content-type, idempotency-key, traceparent) replace any configured under the same name in any
// case, instead of being joined to them ("fixed, <key>"). Headers that would break the request's
// framing or address another server, and names or values HTTP cannot carry, are refused at
// registration, by RPC or in the config file. Real gRPC server and loopback tool server.

let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({ '/t': (_req, res) => void res.end('ok') });
  d = await startDispatch(`
tools:
  - name: t
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/t", headers: { Authorization: "Bearer abc", Content-Type: "text/plain", Idempotency-Key: "fixed", TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

test("dispatch's own headers replace configured ones in another case; the others are sent as configured", async () => {
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const { results } = await d.dispatch.dispatch({ sessionId: 'h', calls: [{ id: 'c', name: 't', arguments: '{"x":1}' }] }, { metadata: { traceparent } });
  expect(results[0]!.output).toBe('ok');
  const { headers, body } = tools.received.at(-1)!;
  expect(headers.authorization).toBe('Bearer abc');
  expect(headers['content-type']).toBe('application/json');
  expect(headers['idempotency-key']).toBe(body.idempotency_key);
  expect(headers.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
});

const httpSpec = (headers: Record<string, string>) => ({ name: 'h', effect: Effect.SIDE_EFFECT, inputSchema: '{"type":"object"}', executor: { case: 'http' as const, value: { url: `${tools.url}/t`, headers } } });
const OWNED = 'hop-by-hop and framing headers (connection, content-length, expect, host, keep-alive, proxy-*, te, trailer, transfer-encoding, upgrade) belong to the HTTP client';

test.each([
  [{ 'Content-Length': '3' }, `tools[0]: tool "h": http.headers may not set "Content-Length": ${OWNED}`],
  [{ 'Transfer-Encoding': 'chunked' }, `tools[0]: tool "h": http.headers may not set "Transfer-Encoding": ${OWNED}`],
  [{ Host: 'admin.internal' }, `tools[0]: tool "h": http.headers may not set "Host": ${OWNED}`],
  [{ 'Proxy-Authorization': 'Basic eA==' }, `tools[0]: tool "h": http.headers may not set "Proxy-Authorization": ${OWNED}`],
  [{ connection: 'close' }, `tools[0]: tool "h": http.headers may not set "connection": ${OWNED}`],
  [{ 'X-A': 'a\u0000b' }, 'tools[0]: tool "h": http.headers "X-A" has a value with a character HTTP headers cannot carry (a control character such as NUL, CR or LF, or one past U+00FF)'],
  [{ 'X-A': 'a\r\nX-Injected: 1' }, 'tools[0]: tool "h": http.headers "X-A" has a value with a character HTTP headers cannot carry (a control character such as NUL, CR or LF, or one past U+00FF)'],
  [{ 'X A': 'b' }, 'tools[0]: tool "h": http.headers name "X A" is not a valid HTTP header name'],
  [{ 'X-Key': 'a', 'x-key': 'b' }, 'tools[0]: tool "h": http.headers sets one header twice: "X-Key" and "x-key" (header names ignore case)'],
])('RegisterTools refuses headers %j: INVALID_ARGUMENT with the reason', async (headers, details) => {
  await expect(d.registry.registerTools({ tools: [httpSpec(headers)] })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details });
});

test('the config file is refused for the same headers', async () => {
  const yaml = `tools:\n  - { name: cl, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/t", headers: { Content-Length: "3" } } }\n`;
  await expect(startDispatch(yaml)).rejects.toThrow(`tool "cl": http.headers may not set "Content-Length": ${OWNED}`);
});

test('valid headers register', async () => {
  await expect(d.registry.registerTools({ tools: [httpSpec({ 'X-Api-Key': 'k1 k2', Accept: 'text/plain' })], replace: true })).resolves.toMatchObject({ registered: 1 });
});

test('a spec registered before these rules, with Content-Length, still sends a well-framed request: without it', async () => {
  const tool = resolveTool(create(ToolSpecSchema, httpSpec({ 'Content-Length': '3', 'X-Api-Key': 'k' })), '', createSchemaCompiler(65_536).compile('{"type":"object"}'));
  const ctx = { toolCallId: 'c', sessionId: 's', attempt: 1, idempotencyKey: 'key', signal: AbortSignal.timeout(5000), deadline: Date.now() + 5000 } as ExecutorContext;
  await expect(createHttpExecutor().execute(tool, { x: 1 }, ctx)).resolves.toBe('ok');
  expect(tools.received.at(-1)!.headers['x-api-key']).toBe('k');
  expect(tools.received.at(-1)!.body.arguments).toEqual({ x: 1 });
});
