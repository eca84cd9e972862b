// An HTTP tool's configured headers (`http: { headers }`) go with each call. One named `__proto__`
// (this case exactly) was registered, listed, and never sent: undici, dispatch's HTTP client, copies
// a request's headers into a plain object by name, where that name sets the prototype. It is now
// refused at registration, by RPC or in the config file, naming a case that is sent; so is one for
// an MCP server (`mcp_servers[].headers`) or the policy endpoint (`endpoint.headers`). Names an object
// inherits otherwise (`constructor`, `toString`) are sent as any other. The real server on port 0,
// and a loopback tool server that reports the header names it received as sent (rawHeaders: Node's
// `req.headers` is a plain object too).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { status } from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp, startDispatch, type TestDispatch } from '../helpers/servers';

const REFUSAL = 'http.headers name "__proto__" is never sent by the HTTP client (it drops a header of exactly that name); write it in another case, such as "__Proto__" (header names ignore case)';

let server: Server;
let url: string;
let d: TestDispatch;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(JSON.stringify(req.rawHeaders.filter((_, i) => i % 2 === 0 && req.rawHeaders[i + 1] === 'sent'))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/h`;
  d = await startDispatch('tools: []\n');
});
afterAll(async () => {
  await d.close();
  server.closeAllConnections();
  server.close();
});

const spec = (name: string, headers: Record<string, string>) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'http' as const, value: { url, headers } } });

test('RegisterTools refuses a header named __proto__, which would never be sent', async () => {
  const headers = JSON.parse('{"__proto__": "sent", "X-Other": "sent"}') as Record<string, string>;
  expect(Object.keys(headers)).toEqual(['__proto__', 'X-Other']);
  await expect(d.registry.registerTools({ tools: [spec('h', headers)] })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: `tools[0]: tool "h": ${REFUSAL}` });
});

test('the config file is refused for it too', async () => {
  await expect(startDispatch(`tools:\n  - { name: h, effect: read_only, http: { url: "${url}", headers: { "__proto__": "sent" } } }\n`)).rejects.toThrow(REFUSAL);
});

test('so are an MCP server and the policy endpoint, whose header goes through the same client', async () => {
  const refused = REFUSAL.replace('http.headers name "__proto__" ', '');
  await expect(startApp(`mcp_servers:\n  - { name: m, url: "${url}", headers: { "__proto__": "sent" } }\n`)).rejects.toThrow(`test.yaml: mcp_servers[0].headers.__proto__: ${refused}`);
  await expect(startApp(`policies:\n  - { endpoint: { url: "${url}", headers: { "__proto__": "sent" } } }\n`)).rejects.toThrow(`test.yaml: policies[0].endpoint.headers.__proto__: ${refused}`);
});

test('headers named constructor, toString or __Proto__ are sent, as any other', async () => {
  const names = ['constructor', 'toString', 'hasOwnProperty', '__Proto__', 'X-Weather'];
  await d.registry.registerTools({ tools: [spec('sends', Object.fromEntries(names.map((n) => [n, 'sent'])))] });
  const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'sends', arguments: '{}' }] });
  expect(JSON.parse(results[0]!.output)).toEqual(names);
});
