// A stdio MCP server's answer larger than the SDK's default read buffer (10 MiB) but within what a
// tool may return (max_tool_output_chars, 16 Mi) is read: it closed the connection, stopping the
// server and failing every call running on it (a side-effecting one then OUTCOME_UNKNOWN).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp } from '../helpers/servers';

const dir = mkdtempSync(join(tmpdir(), 'mcp-big-'));
const script = join(dir, 'server.js');
writeFileSync(
  script,
  `
const { Server } = require(${JSON.stringify(require.resolve('@modelcontextprotocol/sdk/server/index.js'))});
const { StdioServerTransport } = require(${JSON.stringify(require.resolve('@modelcontextprotocol/sdk/server/stdio.js'))});
const { CallToolRequestSchema, ListToolsRequestSchema } = require(${JSON.stringify(require.resolve('@modelcontextprotocol/sdk/types.js'))});
const server = new Server({ name: 'big', version: '1' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [
  { name: 'read_file', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'transfer', inputSchema: { type: 'object' } },
] }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  if (req.params.name === 'read_file') return { content: [{ type: 'text', text: 'x'.repeat(11 * 1024 * 1024) }] };
  await new Promise((r) => setTimeout(r, 1000));
  return { content: [{ type: 'text', text: 'transferred by ' + process.pid }] };
});
server.connect(new StdioServerTransport());
`,
);

type AppT = Awaited<ReturnType<typeof startApp>>;
let t: AppT;
beforeAll(async () => {
  t = await startApp(`mcp_servers:\n  - ${JSON.stringify({ name: 'files', command: [process.execPath, script], trusted: true, reconnect_initial_ms: 100, reconnect_max_ms: 400 })}\n`);
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (name: string, args: string, sessionId = 's1') => t.dispatch.dispatch({ sessionId, calls: [{ id: 'c1', name, arguments: args }] }).then((r) => r.results[0]!);

test('an 11 MiB answer is read (and bounded), and a call running beside it on the same server is unharmed', async () => {
  const transfer = run('files_transfer', '{"to":"bob"}');
  await new Promise((r) => setTimeout(r, 200));
  const big = await run('files_read_file', '{}', 's2');
  expect(big.isError).toBe(false);
  expect(big.truncated).toBe(true);
  const moved = await transfer;
  expect(moved.isError).toBe(false);
  expect(moved.output).toMatch(/^transferred by/);
}, 30_000);
