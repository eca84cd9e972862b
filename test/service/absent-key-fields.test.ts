import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// key_fields name what makes two side effects the same. A call that leaves a key field out is
// keyed by all its arguments: before, the field read as null, so two emails to one address
// without a subject shared one key, and the second (another body) was answered by the first's
// replay without being sent.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  tools = await startToolServer({ '/send': (req, res) => void res.writeHead(200).end(JSON.stringify(req.body.arguments)) });
  d = await startApp(`
tools:
  - name: send_email
    effect: side_effect
    idempotency: { key_fields: ["/to", "/subject"] }
    input_schema: '{"type":"object","properties":{"to":{"type":"string"},"subject":{"type":["string","null"]},"body":{"type":"string"}},"required":["to","body"]}'
    http: { url: "${tools.url}/send" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const send = (args: object) => d.dispatch.dispatch({ sessionId: 'absent-keys', calls: [{ id: 'c', name: 'send_email', arguments: JSON.stringify(args) }] }).then((r) => r.results[0]!);

test('calls leaving a key field out are keyed by all their arguments', async () => {
  const first = await send({ to: 'a@example.com', body: 'one' });
  const second = await send({ to: 'a@example.com', body: 'two' });
  expect([first.idempotentReplay, second.idempotentReplay]).toEqual([false, false]);
  expect(JSON.parse(second.output)).toEqual({ to: 'a@example.com', body: 'two' });
  // The same call again is still a replay.
  expect((await send({ body: 'two', to: 'a@example.com' })).idempotentReplay).toBe(true);
  expect(tools.count('/send')).toBe(2);
});

test('key fields sent, even as null, still key the call by them alone', async () => {
  const first = await send({ to: 'b@example.com', subject: null, body: 'one' });
  const second = await send({ to: 'b@example.com', subject: null, body: 'two' });
  expect([first.idempotentReplay, second.idempotentReplay]).toEqual([false, true]);
  expect(tools.count('/send')).toBe(3);
});
