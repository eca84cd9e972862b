// Audit of examples/tools.yaml: send_email's description, which the model reads, said "at most once
// per identical request", but its idempotency key is /to and /subject alone: an email to the same
// person with the same subject and another body is not sent within the session (replayed).
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';

const EXAMPLE_TOOLS = readFileSync(path.join(__dirname, '../../examples/tools.yaml'), 'utf8');

let t: Awaited<ReturnType<typeof startApp>>;
let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/email': json({ sent: true }) });
  t = await startApp(EXAMPLE_TOOLS.replace('http://127.0.0.1:8081/email', `${tools.url}/email`));
});
afterAll(async () => {
  await t.close();
  await tools.close();
});

test("send_email's description says what its idempotency key does: one email per recipient and subject in a session", async () => {
  const send = (id: string, args: object) => t.dispatch.dispatch({ sessionId: 'mail', calls: [{ id, name: 'send_email', arguments: JSON.stringify(args) }] });
  const first = await send('a', { to: 'a@example.com', subject: 'hi', body: 'one' });
  const otherBody = await send('b', { to: 'a@example.com', subject: 'hi', body: 'two' });
  const otherSubject = await send('c', { to: 'a@example.com', subject: 'hello', body: 'two' });
  expect([first, otherBody, otherSubject].map((r) => r.results[0]!.idempotentReplay)).toEqual([false, true, false]);
  expect(tools.count('/email')).toBe(2);
  const { tools: listed } = await t.registry.listTools({});
  const description = listed.find((tool) => tool.name === 'send_email')!.description;
  expect(description).not.toContain('identical request');
  expect(description).toMatch(/recipient and subject/);
});
