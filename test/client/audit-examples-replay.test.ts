// Audit of examples/typescript/backend.ts against DESIGN's replay flags (as the Python audit test):
// idempotent_replay and cached were not shown, so a replayed side effect read as one done again.
import { runConversation, type ModelCall } from '../../examples/typescript/backend';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';

const config = (url: string) => `tools:
  - name: send_email
    effect: side_effect
    idempotency: { key_fields: ["/to", "/subject"] }
    input_schema: '{"type":"object","properties":{"to":{"type":"string"},"subject":{"type":"string"},"body":{"type":"string"}},"required":["to","subject"]}'
    http: { url: "${url}/email" }
  - name: echo
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
`;
const call = (id: string, name: string, args: unknown): ModelCall => ({ id, name, arguments: JSON.stringify(args) });

let t: Awaited<ReturnType<typeof startApp>>;
let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/email': json({ sent: true }) });
  t = await startApp(config(tools.url));
});
afterAll(async () => {
  await t.close();
  await tools.close();
});

test('the backend says a side effect sent again under a new tool_call_id was replayed, not run, and a memoized read cached', async () => {
  const email = { to: 'a@example.com', subject: 'hi', body: 'x' };
  const lines = await runConversation(t.address, [[call('e1', 'send_email', email)], [call('e2', 'send_email', { ...email, body: 'y' })], [call('r1', 'echo', { q: 1 })], [call('r2', 'echo', { q: 1 })]]);
  expect(tools.count('/email')).toBe(1);
  expect(lines.slice(0, 2)).toEqual(['-- turn 1', 'e1 ok tool=send_email attempts=1: {"sent":true}']);
  expect(lines[2]).toBe('-- turn 2');
  expect(lines[3]).toMatch(/^e2 ok tool=send_email attempts=\d: \{"sent":true\}$/);
  // Its body differs from the first call's: the replay says it was not sent (a warning, before the backend's own line).
  expect(lines[4]).toMatch(/^ {2}warning: this is the result of an earlier call with the same \/to, \/subject, replayed/);
  expect(lines[5]).toMatch(/^ {2}replayed: .*did not run again/);
  expect(lines.slice(6, 8)).toEqual(['-- turn 3', 'r1 ok tool=echo attempts=1: {"q":1}']);
  expect(lines.slice(8)).toEqual(['-- turn 4', expect.stringMatching(/^r2 ok tool=echo attempts=\d: \{"q":1\}$/), expect.stringMatching(/^ {2}cached: /)]);
});
