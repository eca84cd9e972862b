import { getEventListeners } from 'node:events';
import { createMcpExecutor, createMcpServers, openLinks, parseMcpServers, type McpServers } from '../../src/executors/mcp';
import { SILENT_LOGGER } from '../../src/log';
import { startDispatch, type TestDispatch } from '../helpers/servers';
import { startHttpMcp, STDIO_SERVER, type HttpMcp } from './mcp-harness';

// A listener or pending entry left per request (as the transport's signal gained one per request
// before 95b08bb) shows as hundreds over 200 calls (the counts must not move at all); it was 1,000, then 400.
const CALLS = 200;
const PER_TURN = 50;

/** Sends CALLS distinct echo calls in turns of PER_TURN; returns how many succeeded. */
async function callMany(t: TestDispatch, tool: string, count = CALLS): Promise<number> {
  let ok = 0;
  for (let turn = 0; turn < count / PER_TURN; turn++) {
    const calls = Array.from({ length: PER_TURN }, (_, i) => ({ id: `c${i}`, name: tool, arguments: JSON.stringify({ text: `t${turn}-${i}` }) }));
    const { results } = await t.dispatch.dispatch({ sessionId: `s${turn}`, turn, calls });
    ok += results.filter((r) => !r.isError).length;
  }
  return ok;
}

const processListeners = () => Object.fromEntries(['exit', 'SIGTERM', 'SIGINT', 'uncaughtException', 'unhandledRejection', 'warning'].map((e) => [e, process.listenerCount(e)]));

const KINDS = [
  ['stdio', 'local', 'local_echo'],
  ['Streamable HTTP, SSE answers', 'web', 'web_echo'],
  ['Streamable HTTP, JSON answers', 'webjson', 'webjson_echo'],
] as const;

describe('one long-lived MCP client per server', () => {
  let http: HttpMcp;
  let servers: McpServers;
  let t: TestDispatch;
  beforeAll(async () => {
    http = await startHttpMcp();
    const configs = parseMcpServers(
      [
        { name: 'local', command: [process.execPath, STDIO_SERVER] },
        { name: 'web', url: http.url },
        { name: 'webjson', url: http.jsonUrl },
      ],
      'test.yaml',
    );
    servers = createMcpServers(configs, SILENT_LOGGER);
    t = await startDispatch('', { executors: new Map([['mcp', createMcpExecutor(servers)]]) });
    await servers.start(t.server.deps.registry);
  });
  afterAll(async () => {
    await t.close();
    await servers.close();
    await http.kill();
  });

  it.each(KINDS)('keeps listener and pending counts flat over 200 calls (%s)', async (_kind, server, tool) => {
    expect(await callMany(t, tool, PER_TURN)).toBe(PER_TURN);
    const before = { client: servers.get(server)!.diagnostics(), process: processListeners() };
    expect(await callMany(t, tool)).toBe(CALLS);
    const after = { client: servers.get(server)!.diagnostics(), process: processListeners() };
    expect(after).toEqual(before);
    expect(after.client.pendingResponses).toBe(0);
    expect(after.client.timeouts).toBe(0);
    if (server === 'local') expect(after.client.stdoutListeners).toBeGreaterThan(0);
    // The transport's signal covers every request: one listener serves all those in flight.
    else expect(after.client.transportAbortListeners).toBe(1);
    // Only the standalone SSE stream (GET) stays open between calls.
    if (server !== 'local') expect(after.client.transportOpenRequests).toBe(1);
  }, 120_000);

  it.each(KINDS)('holds one abort listener on a signal shared by 200 concurrent calls, in flight and after (%s)', async (_kind, server) => {
    const connection = servers.get(server)!;
    const shared = new AbortController();
    const calls = Array.from({ length: 200 }, (_, i) => connection.call('echo', { text: `shared ${i}` }, { signal: shared.signal, deadline: Date.now() + 10_000 }));
    // More than 10 would draw Node's MaxListenersExceededWarning.
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    const results = await Promise.all(calls);
    expect(results.filter((r) => r.isError !== true)).toHaveLength(200);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    expect(openLinks(shared.signal)).toBe(0);
  }, 60_000);
});
