import * as path from 'node:path';
import { json, startApp, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// An observability probe: a client's `tracestate` (W3C Trace Context: vendors' entries, OTel's
// sampling threshold `ot=th:...`) was dropped at dispatch; HTTP tools got the traceparent alone.
// It now goes with it, to HTTP tools (the header) and MCP tools (`_meta`), when well formed.

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/t': json({ ok: true }) });
  d = await startDispatch(`
tools:
  - { name: t, effect: read_only, skip_memoize: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/t", headers: { TraceState: "configured=1" } } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const sent = async (metadata: Record<string, string>) => {
  await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 't', arguments: '{}' }] }, { metadata });
  return tools.received.at(-1)!.headers;
};

test("the caller's tracestate reaches an HTTP tool with the traceparent, over a configured one", async () => {
  const headers = await sent({ traceparent: TRACEPARENT, tracestate: 'vendor=abc,ot=th:8' });
  expect(headers.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
  expect(headers.tracestate).toBe('vendor=abc,ot=th:8');
});

test('none without a traceparent, nor one over 512 characters or not printable ASCII: no tracestate is sent at all', async () => {
  expect((await sent({ tracestate: 'vendor=abc' })).tracestate).toBeUndefined();
  expect((await sent({ traceparent: TRACEPARENT, tracestate: `v=${'a'.repeat(600)}` })).tracestate).toBeUndefined();
  expect((await sent({ traceparent: TRACEPARENT })).tracestate).toBeUndefined();
});

test("an MCP tool's _meta carries it beside the traceparent", async () => {
  const server = { name: 'codes', command: [process.execPath, path.join(__dirname, '../mcp/fixtures/error-code-server.js')] };
  const app = await startApp(`mcp_servers:\n  - ${JSON.stringify(server)}\ntools:\n  - { name: meta_probe, effect: read_only, skip_memoize: true, skip_redaction: true, input_schema: '{"type":"object"}', mcp: { server: codes, tool: meta } }\n`);
  try {
    let output = '';
    for (let i = 0; i < 100 && !output.startsWith('{'); i++) {
      output = (await app.dispatch.dispatch({ sessionId: 'm', calls: [{ id: `c${i}`, name: 'meta_probe', arguments: '{}' }] }, { metadata: { traceparent: TRACEPARENT, tracestate: 'vendor=abc' } })).results[0]!.output;
      if (!output.startsWith('{"traceparent')) await new Promise((r) => setTimeout(r, 50));
    }
    expect(JSON.parse(output)).toMatchObject({ traceparent: expect.stringMatching(/^00-4bf92f3577b34da6a3ce929d0e0e4736-/), tracestate: 'vendor=abc' });
  } finally {
    await app.close();
  }
});
