// A Streamable HTTP MCP connection makes its requests through its own undici Agent, ended with
// each client's transport: a connect that hangs (the server's host silent) ends as the client is
// closed (the connection or the app closed, an attempt given up), and no socket of it is left open.
// Before, every request went through Node's fetch's shared dispatcher: such a connect outlived the
// close until undici's connect timeout (10 s) or its next SYN met a closed port, and the sockets
// kept alive after its answers stayed open ~4 s.
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { createMcpConnection, createRequestScopedFetch, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import { SentHooks } from '../../src/executors/mcp/mcp-sent-hooks';
import { SILENT_LOGGER } from '../../src/log';
import { startBlackhole, type Blackhole } from '../helpers/blackhole';
import { eventually } from '../workers/worker-harness';

jest.setTimeout(15_000);

/** Sockets of this process whose connect is under way (the blackhole's last filler among them). */
const connecting = () => (process as unknown as { _getActiveHandles(): { connecting?: boolean }[] })._getActiveHandles().filter((h) => h.connecting === true).length;

const connectionTo = (url: string, extra: Record<string, unknown> = {}): McpConnection =>
  createMcpConnection(parseMcpServers([{ name: 'web', url, ...extra }], 'test.yaml')[0]!, { logger: SILENT_LOGGER, onTools: () => undefined });

/** Well under undici's connect timeout (10 s), the SYN retries to a closed port (1 s, 3 s, 7 s) and an idle socket's keep-alive (~4 s), generous for a loaded machine. */
const PROMPTLY_MS = 1_500;

describe('connects to a host that never answers', () => {
  let hole: Blackhole;
  let baseline: number;
  beforeAll(async () => {
    hole = await startBlackhole();
    baseline = connecting();
  });
  afterAll(() => hole.close());

  test('the connection closed while its first connect hangs: the connect ends at once', async () => {
    const c = connectionTo(`http://127.0.0.1:${hole.port}/mcp`, { connect_timeout_ms: 30_000 });
    const started = c.start();
    await eventually(() => connecting() > baseline, 2_000, 'the connect under way');
    await c.close();
    await started;
    await eventually(() => connecting() === baseline, PROMPTLY_MS, 'the connect to end');
  });

  test('an attempt given up (its connect timeout) ends its connects while the connection waits to try again', async () => {
    const c = connectionTo(`http://127.0.0.1:${hole.port}/mcp`, { connect_timeout_ms: 300, reconnect_initial_ms: 60_000, reconnect_max_ms: 60_000 });
    try {
      await c.start();
      expect(c.connected()).toBe(false);
      await eventually(() => connecting() === baseline, PROMPTLY_MS, 'the connect to end');
    } finally {
      await c.close();
    }
  });
});

/** A Streamable HTTP MCP server on loopback (JSON answers, an SSE GET stream), counting its sockets open. */
function startServer(): Promise<{ server: Server; url: string; open: Set<Socket>; methods: string[] }> {
  const open = new Set<Socket>();
  const methods: string[] = [];
  const server = createServer((req, res) => {
    methods.push(req.method!);
    if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const message = JSON.parse(body) as { id?: number; method: string; params: { protocolVersion?: string } };
      if (message.id === undefined) return void res.writeHead(202).end();
      const reply = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      if (message.method === 'initialize') return reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'live', version: '1' } });
      if (message.method === 'tools/list') return reply({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] });
      reply({ content: [{ type: 'text', text: 'done' }] });
    });
  });
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, open, methods })));
}

describe('a server that answers', () => {
  let live: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => (live = await startServer()));
  afterAll(() => new Promise<void>((resolve) => (live.server.closeAllConnections(), live.server.close(() => resolve()))));

  test('once the connection is closed, none of its sockets (POSTs kept alive, the GET stream, the DELETE) stays open', async () => {
    const c = connectionTo(live.url);
    try {
      await c.start();
      expect(c.connected()).toBe(true);
      await expect(c.call('echo', {}, { signal: new AbortController().signal, deadline: Date.now() + 5_000 })).resolves.toMatchObject({ content: [{ text: 'done' }] });
      await eventually(() => live.methods.includes('GET'), 2_000, 'the GET stream');
      expect(live.open.size).toBeGreaterThan(0);
    } finally {
      await c.close();
    }
    expect(live.methods).toContain('DELETE');
    await eventually(() => live.open.size === 0, PROMPTLY_MS, 'the sockets to close');
  });

  test('the fetch makes every request through the dispatcher given, and a call counts as sent only once its POST has a connected socket', async () => {
    const agent = new Agent();
    const through: string[] = [];
    const dispatcher = agent.compose((dispatch) => (options, handler) => (through.push(options.method), dispatch(options, handler))) as Dispatcher;
    const hooks = new SentHooks();
    // A send under way (the transport's send awaits its POST's fetch): its hook is held meanwhile.
    const transport = { send: () => new Promise<void>(() => undefined) } as unknown as Parameters<SentHooks['wrap']>[0];
    hooks.wrap(transport);
    const sent: string[] = [];
    hooks.arm(() => sent.push('call'), () => void transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }));
    const scoped = createRequestScopedFetch(globalThis.fetch, { sentHooks: hooks, dispatcher });
    try {
      const get = await scoped(live.url, { method: 'GET' });
      await get.body!.cancel();
      expect(sent).toEqual([]);
      await (await scoped(live.url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }) })).text();
      expect(sent).toEqual(['call']);
      await (await scoped(live.url, { method: 'DELETE' })).text();
      expect(through).toEqual(['GET', 'POST', 'DELETE']);
    } finally {
      await agent.destroy();
    }
  });
});
