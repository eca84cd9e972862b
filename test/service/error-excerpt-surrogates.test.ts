import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { fromHttpStatus } from '../../src/executors/http-errors';
import { mcpToolError, noteDropped, classifyMcpError } from '../../src/executors/mcp';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// An error's message quotes the start of what the tool said, cut at a number of UTF-16 units. A
// cut through a surrogate pair (an emoji at the cut) left a lone surrogate in the message: the
// output JSON then carries "\ud83d", which a model API refuses as invalid JSON ("no low surrogate
// in string") and a Python backend cannot encode, so the result cannot be handed to the model.

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** `at` characters, then emoji: the cut at `at` + 1 units falls inside the first one. */
const straddling = (at: number) => `${'a'.repeat(at)}${'\u{1F600}'.repeat(20)}`;

let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({
    '/fail': (_req, res) => void res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(straddling(499)),
  });
  d = await startDispatch(`tools:
  - name: failing
    effect: read_only
    input_schema: '{"type":"object"}'
    retry: { max_attempts: 1 }
    http: { url: "${tools.url}/fail" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

test('an HTTP error answer cut at an emoji leaves no lone surrogate in the output a model reads', async () => {
  const [result] = (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'failing', arguments: '{}' }] })).results;
  expect(result!.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(result!.output).not.toMatch(/\\ud[89ab]/i);
  const message = (JSON.parse(result!.output) as { message: string }).message;
  expect(message).toMatch(/^the tool answered HTTP 500: a{499}\.\.\.$/);
  expect(LONE.test(message)).toBe(false);
});

test('fromHttpStatus, mcpToolError and a drop reason never cut through a surrogate pair', () => {
  expect(LONE.test(fromHttpStatus(503, straddling(499), null).message)).toBe(false);
  expect(LONE.test(mcpToolError('srv', 'tool', straddling(1_999)).message)).toBe(false);
  const client = {};
  noteDropped(client, straddling(499));
  const { error } = classifyMcpError(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), 'srv', 'cmd', client);
  expect(LONE.test(error.message)).toBe(false);
});
