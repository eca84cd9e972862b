import { createMcpConnection, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import { SILENT_LOGGER } from '../../src/log';
import { startHttpMcp, STDIO_SERVER, type HttpMcp } from './mcp-harness';

// A call its client abandons is watched until the tool's timeout (then the server is pinged if it
// answered no call meanwhile). The watch held its client, and a timer, until then (timeout_ms: up
// to 49 days) though the client was retired: its server had crashed or been replaced. Now retiring
// a client ends its watches at once. Real server processes (stdio fixture, Streamable HTTP fixture).

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let connection: McpConnection | undefined;
let http: HttpMcp | undefined;
afterEach(async () => {
  await connection?.close();
  connection = undefined;
  await http?.kill();
  http = undefined;
});

/** Abandons a `slow` call after 100 ms, the tool's timeout being a minute. */
async function abandon(c: McpConnection): Promise<void> {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('cancelled')), 100);
  await expect(c.call('slow', { ms: 600_000 }, { signal: controller.signal, deadline: Date.now() + 60_000, timedOut: () => false, timeoutMs: 60_000 })).rejects.toThrow();
}

async function until(condition: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await sleep(20);
}

test.each<[string, () => Promise<Record<string, unknown>>]>([
  ['stdio', async () => ({ name: 'local', command: [process.execPath, STDIO_SERVER] })],
  ['http', async () => ({ name: 'web', url: (http = await startHttpMcp()).url })],
])("an abandoned call's watch ends when its server's client is retired (%s)", async (_, entry) => {
  const config = parseMcpServers([{ ...(await entry()), reconnect_initial_ms: 100, reconnect_max_ms: 400 }], 'test.yaml')[0]!;
  const c = (connection = createMcpConnection(config, { logger: SILENT_LOGGER, onTools: () => undefined }));
  await c.start();
  await abandon(c);
  await abandon(c);
  // At least one still watched (a response the server sent meanwhile, over HTTP, ends the earlier).
  expect(c.diagnostics().livenessWatches).toBeGreaterThan(0);
  // The server crashes: its client is retired (stdio: the process exited; HTTP: the session's stream lost).
  void c.call('crash', {}, { signal: new AbortController().signal, deadline: Date.now() + 5_000 }).catch(() => undefined);
  if (http) {
    await sleep(200);
    await http.restart();
  }
  await until(() => !c.connected(), 5_000);
  expect(c.connected()).toBe(false);
  expect(c.diagnostics()).toMatchObject({ livenessWatches: 0, livenessChecks: 0 });
  // A new client connects; nothing of the old one is watched.
  await until(() => c.connected(), 10_000);
  expect(c.connected()).toBe(true);
  expect(c.diagnostics()).toMatchObject({ livenessWatches: 0, livenessChecks: 0 });
});
