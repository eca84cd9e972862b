import * as path from 'node:path';
import { createMcpConnection, type McpConnection } from '../../src/executors/mcp';
import { parseMcpServers } from '../../src/executors/mcp/mcp-config';
import { SILENT_LOGGER, type Logger } from '../../src/log';

// Found by a probe: a stdio server that crashed at start (exit 3) was logged only as `MCP error
// -32000: Connection closed`, retried: its exit code and what it printed on stderr (the reason)
// went to a debug line. Now the warning carries both, the stderr's end redacted.

const STDIO_SERVER = path.join(__dirname, 'fixtures/stdio-server.js');
let connection: McpConnection | undefined;
afterEach(() => connection?.close());

/** A logger keeping the warnings of `message`, and a promise of the first. */
function warnings(message: string): { logger: Logger; first: Promise<Record<string, unknown>> } {
  let resolve: (fields: Record<string, unknown>) => void = () => undefined;
  const first = new Promise<Record<string, unknown>>((r) => (resolve = r));
  const logger: Logger = { ...SILENT_LOGGER, warn: (m, fields) => void (m === message && resolve(fields ?? {})) };
  return { logger, first };
}

test('a stdio server that exits at start is logged with its exit code and the end of its stderr', async () => {
  const script = "console.error('Error: Cannot find module ./db.js\\n  GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345'); process.exit(3)";
  const [config] = parseMcpServers([{ name: 'crashes', command: [process.execPath, '-e', script] }], 'test.yaml');
  const { logger, first } = warnings('mcp server connection failed; retrying');
  connection = createMcpConnection(config!, { logger, onTools: () => undefined });
  void connection.start().catch(() => undefined);
  const fields = await first;
  expect(fields.exit).toBe('exited with code 3');
  expect(fields.stderr).toContain('Cannot find module ./db.js');
  expect(fields.stderr).toContain('GITHUB_TOKEN=[REDACTED:');
  expect(fields.stderr).not.toContain('ghp_0123');
}, 20_000);

test('a stdio server that exits while connected is logged with its exit code and its last words', async () => {
  const script = `require(${JSON.stringify(STDIO_SERVER)}); setTimeout(() => { console.error('fatal: out of memory'); process.exit(7); }, 1500)`;
  const [config] = parseMcpServers([{ name: 'dies', command: [process.execPath, '-e', script] }], 'test.yaml');
  const { logger, first } = warnings('mcp server connection lost; reconnecting');
  connection = createMcpConnection(config!, { logger, onTools: () => undefined });
  await connection.start();
  expect(connection.connected()).toBe(true);
  const fields = await first;
  expect(fields.exit).toBe('exited with code 7');
  expect(fields.stderr).toBe('fatal: out of memory');
}, 20_000);
