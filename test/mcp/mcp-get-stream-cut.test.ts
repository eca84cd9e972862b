import { createServer, type Server, type ServerResponse } from 'node:http';
import type { McpConnection } from '../../src/executors/mcp';
import { connectHttp, lostLogger } from './mcp-harness';

// The standalone GET stream of a Streamable HTTP server carries only the server's own requests and
// notifications (the spec keeps answers to calls off it, but when resuming one). Cut by the network
// (a load balancer's idle timeout, a proxy restarting), it was taken as a lost answer stream: the
// whole connection was dropped and every call in flight on it failed "lost mid-request" (DURING: a
// side-effecting one OUTCOME_UNKNOWN, never retried), though their own POST streams were whole.
// Now the GET stream ends as if the server had ended it, and the SDK opens it again. A real HTTP
// server on loopback, speaking MCP: JSON answers to POSTs, an SSE stream to a GET.

jest.setTimeout(20_000);

const gets: ServerResponse[] = [];
let posts = 0;

function startServer(): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      gets.push(res);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      return void res.write(': open\n\n');
    }
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      posts++;
      const message = JSON.parse(body) as { id?: number; method: string; params: { name?: string; protocolVersion?: string } };
      if (message.id === undefined) return void res.writeHead(202).end();
      const reply = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      if (message.method === 'initialize') return reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'cut', version: '1' } });
      if (message.method === 'tools/list') return reply({ tools: [{ name: 'slow', inputSchema: { type: 'object' } }] });
      setTimeout(() => reply({ content: [{ type: 'text', text: 'done' }] }), 1_500);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const { lost, logger } = lostLogger();
let c: McpConnection;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ connection: c, close } = await connectHttp(await startServer(), 'cut', logger));
});
afterAll(() => close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a GET stream cut by the network leaves the connection and the calls in flight on it, and is opened again', async () => {
  const end = Date.now() + 5_000;
  while (gets.length === 0 && Date.now() < end) await sleep(20);
  expect(gets).toHaveLength(1);
  const postsBefore = posts;
  const call = c.call('slow', {}, { signal: new AbortController().signal, deadline: Date.now() + 10_000 });
  await sleep(300);
  gets[0]!.socket!.destroy();
  await expect(call).resolves.toMatchObject({ content: [{ text: 'done' }] });
  expect(lost).toEqual([]);
  expect(c.connected()).toBe(true);
  // Not connected again (no new initialize): the same session goes on, its GET stream opened again.
  while (gets.length < 2 && Date.now() < end + 5_000) await sleep(50);
  expect(gets).toHaveLength(2);
  expect(posts).toBe(postsBefore + 1);
});
