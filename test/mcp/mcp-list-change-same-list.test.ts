import * as path from 'node:path';
import { createMcpServers, parseMcpServers, type McpServers } from '../../src/executors/mcp';
import { SILENT_LOGGER } from '../../src/log';
import { createSchemaCompiler, createToolRegistry } from '../../src/registry';
import type { ToolRegistry } from '../../src/registry/tool-registry';

// A tools/list_changed that comes while a list is being imported stops that import (superseded)
// and lists the tools again. When the list is the same (a server announcing its tools once loaded,
// or registering them again), the new listing was taken as told already (its digest was noted
// when the stopped import began) and not imported: the tools the stopped import had not reached
// were never registered, until the server's list changed or it reconnected. A real
// @modelcontextprotocol/sdk server in a child process.

jest.setTimeout(30_000);

const RENOTIFY = path.join(__dirname, 'fixtures/renotify-server.js');
const TOOLS = 40;

let servers: McpServers | undefined;
let registry: ToolRegistry | undefined;
afterEach(async () => {
  await servers?.close();
  await registry?.close();
  servers = registry = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('every tool is registered when the server says its list changed, unchanged, during the first import', async () => {
  registry = createToolRegistry(createSchemaCompiler(1 << 20), () => new Set(['mcp']), { logger: SILENT_LOGGER });
  servers = createMcpServers(parseMcpServers([{ name: 'r', command: [process.execPath, RENOTIFY], env: { TOOLS: String(TOOLS) } }], 'test.yaml'), SILENT_LOGGER);
  await servers.start(registry);
  // Past the notification's listing and its import.
  const end = Date.now() + 10_000;
  while (registry.list('').length < TOOLS && Date.now() < end) await sleep(50);
  await sleep(500);
  expect(registry.list('').map((tool) => tool.name).sort()).toEqual(Array.from({ length: TOOLS }, (_, i) => `r_t${i}`).sort());
});

test('every tool is registered when the server says its list changed, unchanged, every 300 ms from its first listing on', async () => {
  registry = createToolRegistry(createSchemaCompiler(1 << 20), () => new Set(['mcp']), { logger: SILENT_LOGGER });
  servers = createMcpServers(parseMcpServers([{ name: 'r', command: [process.execPath, RENOTIFY], env: { TOOLS: String(TOOLS), REPEAT_MS: '300' } }], 'test.yaml'), SILENT_LOGGER);
  await servers.start(registry);
  const end = Date.now() + 20_000;
  while (registry.list('').length < TOOLS && Date.now() < end) await sleep(50);
  expect(registry.list('').map((tool) => tool.name).sort()).toEqual(Array.from({ length: TOOLS }, (_, i) => `r_t${i}`).sort());
});
