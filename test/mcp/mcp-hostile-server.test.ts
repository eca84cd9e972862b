import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createMcpConnection, createMcpServers, parseMcpServers, type McpConnection, type McpServers } from '../../src/executors/mcp';
import { guardRequests } from '../../src/executors/mcp/mcp-request-guard';
import type { Logger } from '../../src/log';
import { createSchemaCompiler, createToolRegistry } from '../../src/registry';
import { isAlive } from './mcp-harness';

// Stdio MCP servers that misbehave (test/mcp/fixtures/hostile-server.js, raw JSON-RPC): one that
// sends requests and never reads the answers grew dispatch's heap until V8 aborted; a flood of
// tools/list_changed started a listing and an import per notification, all at once; one tool
// whose inputSchema lacks "type": "object" failed the whole list, so the server was respawned
// at every backoff and none of its tools imported.

jest.setTimeout(30_000);

const HOSTILE = path.join(__dirname, 'fixtures/hostile-server.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Logged {
  readonly level: string;
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

function recordingLogger(): Logger & { lines: Logged[] } {
  const lines: Logged[] = [];
  const at = (level: string) => (message: string, fields: Record<string, unknown> = {}) => void lines.push({ level, message, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

let logFile = '';
const logLines = (): string[] => {
  try {
    return readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};
const starts = () => logLines().filter((l) => l.startsWith('start '));
const listings = () => logLines().filter((l) => l === 'list').length;

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(50);
  return check();
}

function config(mode: string, env: Record<string, string> = {}) {
  logFile = path.join(mkdtempSync(path.join(tmpdir(), 'mcp-hostile-')), 'log');
  const server = { name: 'h', command: [process.execPath, HOSTILE], env: { MODE: mode, LOG: logFile, ...env }, reconnect_initial_ms: 300, reconnect_max_ms: 300, reconnect_wait_ms: 0 };
  return parseMcpServers([server], 'test.yaml')[0]!;
}

let connection: McpConnection | undefined;
let servers: McpServers | undefined;
afterEach(async () => {
  await connection?.close();
  await servers?.close();
  connection = servers = undefined;
  for (const line of starts()) {
    const pid = Number(line.split(' ')[1]);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
});

test('a server flooding requests it never reads the answers of is dropped, and dispatch holds a bounded number of answers', async () => {
  const logger = recordingLogger();
  connection = createMcpConnection(config('reqflood', { REQN: '200000' }), { logger, onTools: () => undefined });
  await connection.start();
  expect(connection.connected()).toBe(true);
  let maxStdinListeners = 0;
  const dropped = await until(() => {
    maxStdinListeners = Math.max(maxStdinListeners, connection!.diagnostics().stdinListeners ?? 0);
    return logger.lines.some((l) => l.message.includes('connection lost'));
  }, 10_000);
  expect(dropped).toBe(true);
  const reason = String(logger.lines.find((l) => l.message.includes('connection lost'))!.fields.reason);
  expect(reason).toMatch(/sent requests faster than it read their answers|does not read its input/);
  // One `drain` listener per answer waiting to be written, at most the bound (100) and a few.
  expect(maxStdinListeners).toBeLessThan(150);
  // Dropped = reconnected, with backoff.
  expect(await until(() => starts().length >= 2, 5_000)).toBe(true);
});

test('a flood of tools/list_changed makes at most one listing at a time and one more after it, and imports once', async () => {
  const logger = recordingLogger();
  const registry = createToolRegistry(createSchemaCompiler(1 << 20), () => new Set(['mcp']), { logger });
  servers = createMcpServers([config('listflood', { LISTN: '2000' })], logger);
  await servers.start(registry);
  expect(listings()).toBe(1);
  const began = Date.now();
  const result = await servers.get('h')!.call('listflood', {}, { signal: new AbortController().signal, deadline: Date.now() + 10_000 });
  expect(result.isError).toBeFalsy();
  await sleep(1_000);
  // Old code: 2,000 concurrent listings.
  expect(listings()).toBeLessThanOrEqual(3);
  expect(Date.now() - began).toBeLessThan(5_000);
  // The same list again is not imported again.
  expect(logger.lines.filter((l) => l.message === 'mcp tools imported')).toHaveLength(1);
  expect(registry.lookup('', 'h_echo')).toBeDefined();
});

test('a tool the MCP schema refuses is skipped with a short reason, and the server s other tools are imported', async () => {
  const logger = recordingLogger();
  const registry = createToolRegistry(createSchemaCompiler(1 << 20), () => new Set(['mcp']), { logger });
  servers = createMcpServers([config('onebad')], logger);
  await servers.start(registry);
  expect(servers.get('h')!.connected()).toBe(true);
  expect(registry.lookup('', 'h_echo')).toBeDefined();
  expect(registry.lookup('', 'h_empty')).toBeUndefined();
  expect(registry.lookup('', 'h_nonsense')).toBeUndefined();
  const skipped = logger.lines.filter((l) => l.message === 'mcp tool not imported');
  expect(skipped.map((l) => l.fields.tool).sort()).toEqual(['empty', 'nonsense']);
  for (const line of skipped) {
    const reason = String(line.fields.reason);
    expect(reason).toMatch(/inputSchema/);
    expect(reason).not.toContain('\n');
    expect(reason.length).toBeLessThanOrEqual(200);
  }
  // Not respawned (backoff 300 ms).
  await sleep(1_500);
  expect(starts()).toHaveLength(1);
  expect(servers.get('h')!.connected()).toBe(true);
});

test('the guard stops answering past the bound of answers in flight (a Streamable HTTP transport: one POST each) and tells it once', async () => {
  const posted: unknown[] = [];
  const delivered: unknown[] = [];
  const transport = {
    onmessage: (message: unknown) => void delivered.push(message),
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
    // Never answered, as a POST to a server that does not read it.
    send: (message: unknown) => (posted.push(message), new Promise<void>(() => undefined)),
  };
  const reasons: string[] = [];
  guardRequests(transport as never, { maxAnswersInFlight: 10, onAbuse: (reason) => reasons.push(reason) });
  await transport.start();
  for (let k = 0; k < 1_000; k++) void transport.send({ jsonrpc: '2.0', id: k, error: { code: -32601, message: 'Method not found' } } as never);
  expect(posted).toHaveLength(10);
  expect(reasons).toHaveLength(1);
  expect(reasons[0]).toMatch(/faster than it read their answers/);
  transport.onmessage({ jsonrpc: '2.0', id: 'x', method: 'roots/list' });
  expect(delivered).toHaveLength(0);
});
