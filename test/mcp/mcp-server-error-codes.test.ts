import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp } from '../helpers/servers';

// A tool author's probe: an MCP server answering a call with JSON-RPC error -32000 (the first
// "server error" code, the one servers use most) was taken for a lost connection: UNAVAILABLE
// "the connection ... was lost mid-request", the server dropped and started again, and a
// side-effecting call's outcome told unknown (OUTCOME_UNKNOWN for the record's hour); -32001 was
// taken for a timeout. The SDK uses those codes for its own closed connection and timeout; an
// error the server answered is now TOOL_ERROR, whatever its code. A real stdio server (raw JSON-RPC).

jest.setTimeout(30_000);

const LOG = path.join(mkdtempSync(path.join(tmpdir(), 'mcp-codes-')), 'log');
let t: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  const server = { name: 'codes', command: [process.execPath, path.join(__dirname, 'fixtures/error-code-server.js')], env: { LOG }, trusted: true };
  t = await startApp(`mcp_servers:\n  - ${JSON.stringify(server)}\ntools:\n  - { name: charge, effect: side_effect, input_schema: '{"type":"object"}', mcp: { server: codes, tool: fail } }\n  - { name: meta_probe, effect: side_effect, skip_redaction: true, input_schema: '{"type":"object"}', mcp: { server: codes, tool: meta } }\n`);
});
afterAll(() => t?.close());

const starts = () => readFileSync(LOG, 'utf8').split('\n').filter((l) => l.startsWith('start')).length;
const call = async (name: string, args: unknown, session = 's') => (await t.dispatch.dispatch({ sessionId: session, calls: [{ id: `c${Math.random()}`, name, arguments: JSON.stringify(args) }] })).results[0]!;

test.each([-32000, -32001, -32603, -32099, 1])('error code %i answered by the server: TOOL_ERROR naming its message; the server is kept', async (code) => {
  const before = starts();
  const result = await call('codes_fail', { code });
  expect(result.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, message: expect.stringContaining('backend exploded') });
  expect((await call('codes_ok', {})).output).toBe('fine');
  expect(starts()).toBe(before);
});

test('a side-effecting tool answered -32000: its record keeps the error (replayed), not an unknown outcome', async () => {
  const first = await call('charge', { code: -32000 }, 'side');
  expect(first.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  const again = await call('charge', { code: -32000 }, 'side');
  expect(again.error?.kind).not.toBe(ErrorKind.OUTCOME_UNKNOWN);
  expect(again.idempotentReplay).toBe(true);
});

// The same probe: an MCP tool got only `_meta.traceparent`, no idempotency key nor attempt, so a
// side-effecting MCP tool could not tell a retry from a new call, as HTTP tools and workers can.
test("a call's _meta carries its idempotency key and attempt (dispatch/ keys), the key the same for the same call", async () => {
  // skip_redaction: the key, high-entropy text, is redacted from the output otherwise.
  const first = JSON.parse((await call('meta_probe', { a: 1 }, 'meta')).output) as Record<string, unknown>;
  expect(first).toMatchObject({ 'dispatch/idempotency_key': expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/), 'dispatch/attempt': 1 });
  const other = JSON.parse((await call('meta_probe', { a: 2 }, 'meta')).output) as Record<string, unknown>;
  expect(other['dispatch/idempotency_key']).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  expect(other['dispatch/idempotency_key']).not.toBe(first['dispatch/idempotency_key']);
});

// An MCP gateway user's probe: a server whose error message carries the SDK's own prefix (an
// McpError it threw, as the SDK's servers answer) read "MCP error -32602: MCP error -32602: ...".
test('an error message already prefixed with its code is said once', async () => {
  const result = await call('codes_fail', { code: -32602, message: 'MCP error -32602: bad input' });
  expect(result.error?.message).toBe('MCP server "codes" answered an error: MCP error -32602: bad input');
});
