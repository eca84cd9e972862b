import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';

// A side-effecting call's idempotency key is made of the arguments the tool receives, after pre-tool
// hooks and policies modified them (key_fields read from those too), as the versions before keyed
// them: a retry after an upgrade finds its record, and calls a policy makes identical are one call.
// A policy's modify must therefore be deterministic (docs/policies.md): this endpoint adds a field
// derived from the arguments.

let tools: ToolServer;
let endpoint: Server;
let endpointUrl: string;
beforeAll(async () => {
  tools = await startToolServer({ '/send': json({ sent: true }) });
  endpoint = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const question = JSON.parse(body) as { tool: string; arguments: Record<string, unknown> };
      const answer = question.tool === 'send' ? { decision: 'modify', arguments: { ...question.arguments, checked_for: String(question.arguments.to).toLowerCase() } } : { decision: 'allow' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/check`;
});
afterAll(async () => {
  await tools?.close();
  await new Promise((resolve) => endpoint?.close(resolve));
});

const yaml = () => `
tools:
  - name: send
    effect: side_effect
    input_schema: '{"type":"object","properties":{"to":{"type":"string"}}}'
    http: { url: "${tools.url}/send" }
  - name: send_keyed
    effect: side_effect
    idempotency: { key_fields: ["/to"] }
    input_schema: '{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}}}'
    http: { url: "${tools.url}/send" }
policies:
  - { match: send_keyed, decide: modify, set: { /to: "ops@example.com" } }
  - endpoint: { url: "${endpointUrl}" }
`;

test('a policy adding a field derived from the arguments: the identical retry is replayed, the tool ran once', async () => {
  const d = await startApp(yaml());
  const before = tools.count('/send');
  try {
    const call = { sessionId: 's-derived', calls: [{ id: 'c1', name: 'send', arguments: '{"to":"Bob"}' }] };
    const first = (await d.dispatch.dispatch(call)).results[0]!;
    const retry = (await d.dispatch.dispatch(call)).results[0]!;
    expect(first).toMatchObject({ isError: false, idempotentReplay: false });
    expect(retry).toMatchObject({ isError: false, output: '{"sent":true}', idempotentReplay: true });
    const sent = tools.received.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.arguments).toEqual({ to: 'Bob', checked_for: 'bob' });
  } finally {
    await d.close();
  }
});

test('key_fields are read from the arguments as a policy set them: calls it makes identical are one call', async () => {
  const d = await startApp(yaml());
  const before = tools.count('/send');
  try {
    const send = (id: string, to: string) => d.dispatch.dispatch({ sessionId: 's-keyed', calls: [{ id, name: 'send_keyed', arguments: JSON.stringify({ to, body: 'hi' }) }] });
    const a = (await send('c1', 'alice@example.com')).results[0]!;
    const b = (await send('c2', 'bob@example.com')).results[0]!;
    expect([a.idempotentReplay, b.idempotentReplay]).toEqual([false, true]);
    const sent = tools.received.slice(before);
    expect(sent.map((r) => (r.body.arguments as { to: string }).to)).toEqual(['ops@example.com']);
  } finally {
    await d.close();
  }
});
