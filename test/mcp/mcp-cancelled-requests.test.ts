import type { Socket } from 'node:net';
import { createMcpConnection, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import { SILENT_LOGGER } from '../../src/log';
import { eventually } from '../workers/worker-harness';
import { startHttpMcp, type HttpMcp } from './mcp-harness';

// A call to a Streamable HTTP MCP server that is aborted or times out leaves no request open: the
// SDK's server never answers a cancelled request, so its SSE stream (and a socket) stayed open
// until the connection closed, one more per timed-out call. A real @modelcontextprotocol/sdk
// server in a child process; the sockets counted are this process's own.

jest.setTimeout(30_000);

let http: HttpMcp | undefined;
let connection: McpConnection | undefined;
afterEach(async () => {
  await connection?.close();
  connection = undefined;
  await http?.kill();
  http = undefined;
});

/** This process's open sockets to `port`. */
function socketsTo(port: number): number {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h) => (h as Socket).remotePort === port && !(h as Socket).destroyed).length;
}

const CALLS = 6;

test('aborted and timed-out calls leave no socket open, and the connection still answers', async () => {
  const server = (http = await startHttpMcp());
  const config = parseMcpServers([{ name: 'web', url: server.url, trusted: true }], 'test.yaml')[0]!;
  const c = (connection = createMcpConnection(config, { logger: SILENT_LOGGER, onTools: () => undefined }));
  await c.start();
  expect(c.connected()).toBe(true);
  const baseline = socketsTo(server.port);
  const requests = c.diagnostics().transportOpenRequests;

  for (let i = 0; i < CALLS; i++) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new Error('timeout')), 300);
    await expect(c.call('slow', { ms: 600_000 }, { signal: abort.signal, deadline: Date.now() + 300 })).rejects.toThrow();
    clearTimeout(timer);
  }
  // The SDK's own timeout (the deadline passed: it waits 1 s) cancels the request too.
  await expect(c.call('slow', { ms: 600_000 }, { signal: new AbortController().signal, deadline: Date.now() })).rejects.toThrow(/did not answer in time/);

  await eventually(() => socketsTo(server.port) <= baseline, 3_000, `sockets back to ${baseline} (${socketsTo(server.port)} open)`);
  expect(c.diagnostics().transportOpenRequests).toBeLessThanOrEqual(requests);
  expect(c.connected()).toBe(true);
  const answer = await c.call('echo', { text: 'still here' }, { signal: new AbortController().signal, deadline: Date.now() + 5_000 });
  expect(JSON.stringify(answer)).toContain('still here');
  expect(c.diagnostics()).toMatchObject({ openClients: 1 });
});
