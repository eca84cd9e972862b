import * as path from 'node:path';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp } from '../helpers/servers';

// A tool author's probe: a config file's tool pinned to an MCP server's tool (`mcp: { server, tool
// }`, with its own effect and schema: the documented way to declare an untrusted server's tool
// read-only) under the name the server's import gives it was silently replaced by the import (its
// effect side-effecting again, the server's schema), where a built-in of that name is kept with a
// warning. The config file's tool is now kept, and the import says the name is taken. A real stdio
// server (raw JSON-RPC).

jest.setTimeout(30_000);

let t: Awaited<ReturnType<typeof startApp>>;
const lines: { message: string; fields: Record<string, unknown> }[] = [];
beforeAll(async () => {
  const server = { name: 'codes', command: [process.execPath, path.join(__dirname, 'fixtures/error-code-server.js')] };
  const record = (message: string, fields: Record<string, unknown> = {}) => void lines.push({ message, fields });
  const logger = { debug() {}, info: record, warn: record, error: record };
  t = await startApp(`mcp_servers:\n  - ${JSON.stringify(server)}\ntools:\n  - { name: codes_ok, effect: read_only, description: mine, input_schema: '{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}', mcp: { server: codes, tool: ok } }\n`, { logger });
  const deadline = Date.now() + 10_000;
  while (!lines.some((l) => l.message === 'mcp tools imported') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
});
afterAll(() => t?.close());

test("the config file's tool keeps its effect and schema; the import of that name is refused with a warning, the server's other tool imported", async () => {
  const { tools } = await t.registry.listTools({});
  const mine = tools.find((tool) => tool.name === 'codes_ok')!;
  expect(mine).toMatchObject({ effect: Effect.READ_ONLY, description: 'mine' });
  expect(tools.map((tool) => tool.name)).toContain('codes_fail');
  expect(lines).toContainEqual({ message: 'mcp tool not imported: the name is taken by another tool', fields: { server: 'codes', tool: 'codes_ok' } });
  const [result] = (await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'codes_ok', arguments: '{"q":"x"}' }] })).results;
  expect(result).toMatchObject({ isError: false, output: 'fine' });
});
