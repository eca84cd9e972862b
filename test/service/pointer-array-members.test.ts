import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// A JSON pointer names in an array only an index below its length (RFC 6901): `/to/length`
// resolved to the array's length, so with key_fields ["/to/length"] two emails to different
// single recipients shared one idempotency key and the second was replayed, never sent (found
// fuzzing). Real loopback HTTP tool server; each request it counts was sent.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  tools = await startToolServer({
    '/by-length': (req, res) => void res.writeHead(200).end(JSON.stringify(req.body.arguments)),
    '/by-first': (req, res) => void res.writeHead(200).end(JSON.stringify(req.body.arguments)),
  });
  d = await startApp(`
tools:
  - name: send_by_length
    effect: side_effect
    idempotency: { key_fields: ["/to/length"] }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/by-length" }
  - name: send_by_first
    effect: side_effect
    idempotency: { key_fields: ["/to/0"] }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/by-first" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const send = (name: string, args: object) => d.dispatch.dispatch({ sessionId: 'pointer-arrays', calls: [{ id: 'c', name, arguments: JSON.stringify(args) }] }).then((r) => r.results[0]!);

test('key_fields ["/to/length"] names nothing: two emails to different recipients are both sent', async () => {
  const first = await send('send_by_length', { to: ['alice@example.com'], body: 'hi' });
  const second = await send('send_by_length', { to: ['bob@example.com'], body: 'hi' });
  expect([first.isError, second.isError]).toEqual([false, false]);
  expect([first.idempotentReplay, second.idempotentReplay]).toEqual([false, false]);
  expect(JSON.parse(second.output)).toEqual({ to: ['bob@example.com'], body: 'hi' });
  expect(tools.count('/by-length')).toBe(2);
});

test('key_fields ["/to/0"] keys by the first recipient', async () => {
  const first = await send('send_by_first', { to: ['carol@example.com'], body: 'one' });
  const again = await send('send_by_first', { to: ['carol@example.com'], body: 'two' });
  const other = await send('send_by_first', { to: ['dave@example.com'], body: 'one' });
  expect([first.idempotentReplay, again.idempotentReplay, other.idempotentReplay]).toEqual([false, true, false]);
  expect(tools.count('/by-first')).toBe(2);
});
