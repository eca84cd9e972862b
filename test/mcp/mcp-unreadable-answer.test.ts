// An MCP Streamable HTTP server that ran a tool but answered 200 with a content type the SDK cannot
// read: the failure is DURING (the tool may have run), so an identical re-call gets OUTCOME_UNKNOWN.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, type TestDispatch } from '../helpers/servers';
import type { App } from '../../src/app';

let server: Server;
let executed = 0;
let d: TestDispatch & { app: App };

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const msg = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } };
      const answer = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      switch (msg.method) {
        case 'initialize':
          return answer({ protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'pay', version: '1' } });
        case 'tools/list':
          return answer({ tools: [{ name: 'transfer', inputSchema: { type: 'object' } }] });
        case 'tools/call':
          executed++; // the side effect happened
          return void res.writeHead(200, { 'content-type': 'text/plain' }).end('transferred');
        default:
          return void res.writeHead(202).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  d = await startApp(`
mcp_servers:
  - name: pay
    url: http://127.0.0.1:${port}/mcp
`);
});
afterAll(async () => {
  await d.close();
  server.close();
});

test('a call the server ran, answered in a form the SDK cannot read, is not run again by an identical call', async () => {
  const call = () => d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'pay_transfer', arguments: '{"to":"bob","amount":100}' }] }).then((r) => r.results[0]!);
  const first = await call();
  expect(first.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(executed).toBe(1);
  const second = await call();
  expect(second.error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
  expect(executed).toBe(1);
});
