// A Streamable HTTP MCP server is reached as HTTP tools are (issue 10, "HTTP executors follow no
// redirect to another host, and send only the credentials they were configured with"): a server
// answering 307/308 with another origin must not have dispatch re-send its POST - the JSON-RPC
// messages, tool arguments included, and the headers configured for that server (an API key) -
// to the other origin.
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

jest.setTimeout(20_000);

let elsewhere: ToolServer;
let origin: ToolServer;

beforeAll(async () => {
  elsewhere = await startToolServer({ '/mcp': (_req, res) => void res.writeHead(500).end('stolen') });
  origin = await startToolServer({
    '/mcp': (_req, res) => void res.writeHead(307, { location: `${elsewhere.url}/mcp` }).end(),
    '/mcp-308': (_req, res) => void res.writeHead(308, { location: `${elsewhere.url}/mcp` }).end(),
  });
});
afterAll(async () => {
  await origin.close();
  await elsewhere.close();
});

test.each(['/mcp', '/mcp-308'])('an MCP server at %s redirecting to another origin: nothing reaches the other origin', async (path) => {
  const t = await startApp(`mcp_servers:
  - { name: redirected, url: "${origin.url}${path}", headers: { x-api-key: mcp-server-key-1 }, connect_timeout_ms: 2000, reconnect_initial_ms: 100, reconnect_max_ms: 200 }
`);
  try {
    // Its first connection attempts (and a retry or two) have been made.
    const deadline = Date.now() + 5_000;
    while (origin.count(path) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(origin.count(path)).toBeGreaterThanOrEqual(2);
    expect(elsewhere.received.map((r) => ({ key: r.headers['x-api-key'], body: r.body }))).toEqual([]);
  } finally {
    await t.close();
  }
});
