import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startToolServer, type TestDispatch, type ToolRoute, type ToolServer } from '../helpers/servers';

// A 2xx answer is read until its text passes limits.max_tool_output_chars, then cut as any longer
// output. One over max_tool_output_chars x 4 bytes before that (4 bytes a character: gb18030's
// four-byte codes) is not read; the tool ran, so the call fails UNEXPECTED after it ran, and a
// side-effecting tool's model is told its action took effect and must not be repeated (a re-call
// replays the failure, the tool is not called again).

let tools: ToolServer;
let d: TestDispatch;
// 2,500 characters (U+0080) in 10,000 bytes: past 4,000 bytes the text is 1,000 characters.
const big: ToolRoute = (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain; charset=gb18030' }).end(Buffer.from('81308130'.repeat(2500), 'hex'));
// 10,000 characters in 10,000 bytes: the text passes 1,000 characters first.
const long: ToolRoute = (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(10_000));

beforeAll(async () => {
  tools = await startToolServer({ '/charge': big, '/lookup': big, '/long': long });
  d = await startApp(`
limits: { max_tool_output_chars: 1000 }
tools:
  - { name: charge, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/charge" } }
  - { name: lookup, effect: read_only, memoize_ttl_seconds: 0, input_schema: '{"type":"object"}', http: { url: "${tools.url}/lookup" } }
  - { name: long, effect: side_effect, max_result_chars: 2000, input_schema: '{"type":"object"}', http: { url: "${tools.url}/long" } }
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

test('an answer whose text passes max_tool_output_chars within the bytes is cut, with the output cap\'s warning', async () => {
  const result = await call('l1', 'long');
  expect(result.error).toBeUndefined();
  expect(result.output).toBe('x'.repeat(1000));
  expect(result.warnings).toEqual(["the tool's output was cut at 1000 characters before bounding"]);
});
