import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startToolServer, type TestDispatch, type ToolRoute, type ToolServer } from '../helpers/servers';

// A 2xx answer over limits.max_tool_output_chars x 4 bytes is not read; the tool ran, so the
// call fails UNEXPECTED after it ran, and a side-effecting tool's model is told its action took
// effect and must not be repeated (a re-call replays the failure, the tool is not called again).

let tools: ToolServer;
let d: TestDispatch;
const big: ToolRoute = (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(10_000));

beforeAll(async () => {
  tools = await startToolServer({ '/charge': big, '/lookup': big });
  d = await startApp(`
limits: { max_tool_output_chars: 1000 }
tools:
  - { name: charge, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/charge" } }
  - { name: lookup, effect: read_only, memoize_ttl_seconds: 0, input_schema: '{"type":"object"}', http: { url: "${tools.url}/lookup" } }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const call = (id: string, name: string) => d.dispatch.dispatch({ sessionId: 'oversize', calls: [{ id, name, arguments: '{"amount":5}' }] }).then((r) => r.results[0]!);
const MESSAGE = 'the tool ran (HTTP 200) but its answer exceeded 4000 bytes (limits.max_tool_output_chars x 4) and was not read';

test('a side-effecting tool: the message says it ran, the suggestion not to call it again, and a re-call replays it', async () => {
  const first = await call('c1', 'charge');
  expect(first.error?.kind).toBe(ErrorKind.UNEXPECTED);
  expect(first.error?.message).toBe(MESSAGE);
  const suggestion = 'The call ran and its action took effect, but its answer could not be read; do not call it again: tell the user it was done and that its result is not available.';
  expect(first.error?.suggestion).toBe(suggestion);
  expect(JSON.parse(first.output)).toEqual({ error: true, tool: 'charge', kind: 'UNEXPECTED', message: MESSAGE, recoverable: false, attempts: 1, retried: false, suggestion });

  const again = await call('c2', 'charge');
  expect(again.idempotentReplay).toBe(true);
  expect(again.error?.message).toBe(MESSAGE);
  expect(again.error?.suggestion).toBe(suggestion);
  expect(tools.count('/charge')).toBe(1);
});

test('a read-only tool keeps the plain UNEXPECTED suggestion, and is called again', async () => {
  const result = await call('r1', 'lookup');
  expect(result.error?.kind).toBe(ErrorKind.UNEXPECTED);
  expect(result.error?.message).toBe(MESSAGE);
  expect(result.error?.suggestion).toBe('The tool failed in an unexpected way; do not repeat the same call, tell the user or try a different approach.');
  expect((await call('r2', 'lookup')).idempotentReplay).toBe(false);
  expect(tools.count('/lookup')).toBe(2);
});
