import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// A Python agent author's probe: a side-effecting call cut off at its timeout was told "verify its
// effect before calling again", and the same call, once verified, got OUTCOME_UNKNOWN, told the
// same, for the record's hour: a model doing as told looped until loop detection stopped it. Both
// now say what the same call gets until the record expires and what does reach the tool (the key
// fields' values). A real HTTP tool that answers after the call's timeout.

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/send': json({ sent: true }, 400) });
  d = await startDispatch(`tools:
  - name: send_email
    effect: side_effect
    timeout_ms: 150
    idempotency: { key_fields: ["/to"], ttl_seconds: 600 }
    http: { url: "${tools.url}/send" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const send = (id: string, to: string) => d.dispatch.dispatch({ sessionId: 's', calls: [{ id, name: 'send_email', arguments: JSON.stringify({ to, body: 'hi' }) }] }).then((r) => r.results[0]!);

test('a cut-off side-effecting call and the same call after it name what they get until the record expires, and name no values to change to get past it', async () => {
  const cut = await send('c1', 'a@example.com');
  expect(cut.error?.kind).toBe(ErrorKind.TIMEOUT);
  expect(JSON.parse(cut.output).suggestion).toBe(
    'The call may or may not have taken effect: verify its effect (for example by reading the current state) before anything else. The same call again is answered OUTCOME_UNKNOWN, without reaching the tool, until its idempotency record expires (600 s). Do not change the arguments only to get past this answer: that makes another action, not a retry, and may do it twice; if it did not take effect, tell the user.',
  );
  const again = await send('c2', 'a@example.com');
  expect(again.error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
  expect(again.error?.recoverable).toBe(false);
  expect(again.error?.suggestion).toBe(
    "An identical earlier call may or may not have taken effect: verify its effect (for example by reading the current state). This same call is answered so, without reaching the tool, until that call's idempotency record expires (at most 600 s after it). Do not change the arguments only to get past this answer: that makes another action, not a retry, and may do it twice; if it did not take effect, tell the user.",
  );
  const before = tools.count();
  const other = await send('c3', 'b@example.com');
  expect(other.error?.kind).toBe(ErrorKind.TIMEOUT);
  expect(tools.count()).toBe(before + 1);
});
