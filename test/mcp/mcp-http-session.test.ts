import { createMcpConnection, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import { SILENT_LOGGER } from '../../src/log';
import { startHttpMcp, type HttpMcp } from './mcp-harness';

// A Streamable HTTP client that is dropped while its server is still up (here: the server hung
// past a ping, then recovered) ends its session (a DELETE, bounded in time) instead of leaving
// it open on the server, one per reconnection, until the server's own expiry. A real
// @modelcontextprotocol/sdk server in a child process.

jest.setTimeout(30_000);

let http: HttpMcp | undefined;
let connection: McpConnection | undefined;
afterEach(async () => {
  await connection?.close();
  connection = undefined;
  await http?.kill();
  http = undefined;
});

const sessions = async (server: HttpMcp) => Number(await (await fetch(`http://127.0.0.1:${server.port}/sessions`)).text());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a client dropped after an unanswered ping ends its session; the server holds only the new one', async () => {
  const server = (http = await startHttpMcp());
  const config = parseMcpServers([{ name: 'web', url: server.url, ping_timeout_ms: 300, reconnect_initial_ms: 100, reconnect_max_ms: 100 }], 'test.yaml')[0]!;
  const c = (connection = createMcpConnection(config, { logger: SILENT_LOGGER, onTools: () => undefined }));
  await c.start();
  expect(c.connected()).toBe(true);
  expect(await sessions(server)).toBe(1);

  // The call times out after 1 s; the ping after it is not answered within 300 ms, so the client
  // is dropped (its DELETE waits for the blocked server, up to 1 s) and another one connects.
  const called = Date.now();
  const hung = c.call('hang', { ms: 1_600 }, { signal: new AbortController().signal, deadline: called });
  await expect(hung).rejects.toThrow(/did not answer in time/);
  const end = called + 10_000;
  while (!c.connected() && Date.now() < end) await sleep(50);
  expect(c.connected()).toBe(true);
  // Past the DELETE's bound (the drop at ~1.3 s, plus 1 s).
  await sleep(called + 3_000 - Date.now());
  expect(await sessions(server)).toBe(1);
  expect(c.diagnostics().openClients).toBe(1);
});
