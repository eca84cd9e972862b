import * as path from 'node:path';
import { createMcpConnection, type McpConnection } from '../../src/executors/mcp';
import { parseMcpServers } from '../../src/executors/mcp/mcp-config';
import { SILENT_LOGGER, type Logger } from '../../src/log';
import { cpuMsSince } from '../helpers/cpu-time';

// A stdio server's stderr is read to be logged (debug). Its stdout messages are bounded in rate
// (mcp-message-rate) because a server flooding them took a core of dispatch for as long as it
// went on; its stderr was read as fast as the server wrote it: ~700 MB/s took 40-75% of a core
// here, every call of every tenant slowed, for as long as the server went on.

const FLOOD_SERVER = path.join(__dirname, 'fixtures/stderr-flood-server.js');
let connection: McpConnection | undefined;
afterEach(() => connection?.close());

test("a stdio server flooding its stderr costs dispatch little CPU, and stays connected", async () => {
  const [config] = parseMcpServers([{ name: 'noisy', command: [process.execPath, FLOOD_SERVER] }], 'test.yaml');
  let logged = 0;
  const logger: Logger = { ...SILENT_LOGGER, debug: (message) => void (message === 'mcp server stderr' && logged++) };
  connection = createMcpConnection(config!, { logger, onTools: () => undefined });
  await connection.start();
  expect(connection.connected()).toBe(true);
  // Past the burst (MAX_STDERR_BURST_BYTES, read at once), to the rate.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const since = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const used = cpuMsSince(since);
  // Reading it unbounded: 500-1,500 ms of CPU in these 2 s, on two shared cores; bounded, ~20-60 ms.
  if (process.env.STDERR_FIGURES) process.stdout.write(`${used.toFixed(0)} ms of CPU in 2 s, ${logged} chunks logged\n`);
  expect(used).toBeLessThan(200);
  // Still read, and logged: at its rate.
  expect(logged).toBeGreaterThan(0);
  expect(connection.connected()).toBe(true);
}, 20_000);
