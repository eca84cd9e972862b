import * as path from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { callLog } from '../mcp/mcp-harness';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { eventually } from '../workers/worker-harness';

// A side-effecting tool's transient failure after it ran (a 5xx, an MCP server's -32603) is kept
// by the call's idempotency record: the same call again is replayed for the record's TTL without
// reaching the tool. So the model is not told it is recoverable or to retry after a delay, but
// what does reach the tool. A read-only tool's is retried, and says so, as before.

// It names no values to change to get past it (before: "Only a call with different values at /to
// (another idempotency key) reaches the tool"): a model changed a card number's spacing so.
const KEPT = (ttl: number) =>
  `The same call again returns this same answer, without reaching the tool, until its idempotency record expires (${ttl} s). Read the error message: if it names something to correct, the corrected call is a new action and reaches the tool. Do not change the arguments only to get past this answer: that makes another action, not a retry, and may do it twice; otherwise check whether the action took effect and tell the user what failed.`;

let tools: ToolServer;
let d: TestDispatch;
const log = callLog();

beforeAll(async () => {
  tools = await startToolServer({
    '/busy': (_req, res) => void res.writeHead(503, { 'retry-after': '1' }).end('upstream busy'),
    '/broken': (_req, res) => void res.writeHead(500).end('boom'),
    '/slow': (_req, res) => void res.writeHead(408).end('request timeout'),
  });
  const mcp = JSON.stringify({ name: 'internal', command: [process.execPath, path.join(__dirname, 'fixtures/internal-error-mcp.js')], env: { CALL_LOG: log.file } });
  d = await startApp(`
tools:
  - name: send_busy
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/busy" }
  - name: send_broken
    effect: side_effect
    input_schema: '{"type":"object"}'
    idempotency: { key_fields: ["/to"], ttl_seconds: 120 }
    http: { url: "${tools.url}/broken" }
  - name: read_busy
    effect: read_only
    input_schema: '{"type":"object"}'
    retry: { initial_backoff_ms: 5 }
    http: { url: "${tools.url}/busy" }
  - name: read_slow
    effect: read_only
    input_schema: '{"type":"object"}'
    retry: { initial_backoff_ms: 5 }
    http: { url: "${tools.url}/slow" }
  - name: send_slow
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/slow" }
mcp_servers:
  - ${mcp}
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (name: string, session: string, args = '{"to":"a@b.c"}') => d.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name, arguments: args }] }).then((r) => r.results[0]!);

test('a side-effecting 503 is not recoverable and gives no retry_after_ms, the first time and on its replay', async () => {
  const first = await call('send_busy', 'kept-503');
  expect(first.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(first.error?.recoverable).toBe(false);
  expect(first.error?.retryAfterMs).toBe(0);
  expect(first.error?.suggestion).toBe(KEPT(3600));
  expect(JSON.parse(first.output)).toEqual({ error: true, tool: 'send_busy', kind: 'TOOL_ERROR', message: 'the tool answered HTTP 503: upstream busy', recoverable: false, attempts: 1, retried: false, suggestion: KEPT(3600) });
  expect(tools.count('/busy')).toBe(1);
  const again = await call('send_busy', 'kept-503');
  expect(again.idempotentReplay).toBe(true);
  expect(again.output).toBe(first.output);
  expect(again.error?.recoverable).toBe(false);
  expect(again.error?.suggestion).toBe(KEPT(3600));
  expect(tools.count('/busy')).toBe(1);
});

test("a side-effecting 500 says which arguments make another key, and a call with others reaches the tool", async () => {
  const before = tools.count('/broken');
  const first = await call('send_broken', 'kept-500');
  expect(first.error?.recoverable).toBe(false);
  expect(first.error?.suggestion).toBe(KEPT(120));
  expect((await call('send_broken', 'kept-500', '{"to":"a@b.c","note":"again"}')).idempotentReplay).toBe(true);
  expect(tools.count('/broken')).toBe(before + 1);
  const other = await call('send_broken', 'kept-500', '{"to":"x@y.z"}');
  expect(other.idempotentReplay).toBe(false);
  expect(tools.count('/broken')).toBe(before + 2);
});

test('a read-only 503 is still retried and recoverable, with its Retry-After', async () => {
  const before = tools.count('/busy');
  const result = await call('read_busy', 'kept-read');
  expect(result.attempts).toBe(2);
  expect(result.error?.recoverable).toBe(true);
  expect(result.error?.retryAfterMs).toBe(1000);
  expect(JSON.parse(result.output)).toMatchObject({ recoverable: true, retry_after_ms: 1000 });
  expect(tools.count('/busy')).toBe(before + 2);
});

test("a side-effecting MCP tool's internal error (-32603) is kept the same way", async () => {
  await eventually(async () => (await d.registry.listTools({})).tools.some((x) => x.name === 'internal_explode'), 10_000, 'the MCP tool');
  const first = await call('internal_explode', 'kept-mcp', '{}');
  expect(first.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(first.error?.recoverable).toBe(false);
  expect(first.error?.suggestion).toBe(KEPT(3600));
  expect(JSON.parse(first.output)).toMatchObject({ recoverable: false, suggestion: KEPT(3600) });
  const again = await call('internal_explode', 'kept-mcp', '{}');
  expect(again.idempotentReplay).toBe(true);
  expect(again.error?.recoverable).toBe(false);
  expect(log.lines()).toEqual(['explode']);
});

test('a 408 is transient as a 5xx is: retried for a read-only tool, kept for a side-effecting one', async () => {
  const read = await call('read_slow', 'kept-408');
  expect(read.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(read.error?.message).toBe('the tool answered HTTP 408: request timeout');
  expect(read.attempts).toBe(2);
  expect(read.error?.recoverable).toBe(true);
  expect(tools.count('/slow')).toBe(2);
  const sent = await call('send_slow', 'kept-408');
  expect(sent.attempts).toBe(1);
  expect(sent.error?.recoverable).toBe(false);
  expect(sent.error?.suggestion).toBe(KEPT(3600));
  expect((await call('send_slow', 'kept-408')).idempotentReplay).toBe(true);
  expect(tools.count('/slow')).toBe(3);
});
