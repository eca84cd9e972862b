// Approvals audit: a call whose approval nobody answered (limits.approval_timeout_ms passed) read
// the same BLOCKED text as one an approver denied, "approval was not granted: ... Do not retry", so
// the model could not tell that no human answered (nothing was refused: calling again asks again)
// from an explicit denial (do not retry). A timeout now says so, with what to do; a denial is as it
// was, with the approver's reason. The full app over real gRPC on loopback; the tool is a real
// HTTP server, reached only by the call approved at last.
import type { DispatchResponse } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { startGuardedApp, until } from '../guards/helpers';

jest.setTimeout(20_000);

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startGuardedApp>>;
beforeAll(async () => {
  tools = await startToolServer({ '/deploy': json({ deployed: true }) });
  d = await startGuardedApp(`
tools:
  - { name: deploy, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/deploy" } }
policies:
  - { match: deploy, decide: ask, reason: changes production }
limits: { approval_timeout_ms: 1000 }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

/** The error JSON the model reads in a result's output. */
const modelReads = (response: DispatchResponse) => JSON.parse(response.results[0]!.output) as Record<string, unknown>;

const asked = () => d.events.filter((e) => e.kind === 'APPROVAL_REQUESTED').map((e) => e.detail);

const deploy = (session: string, id: string) => d.dispatch.dispatch({ sessionId: session, interactive: true, calls: [{ id, name: 'deploy', arguments: '{"env":"production"}' }] });

const DENIED_SUGGESTION = 'Do not retry this call; choose a different action or ask the user for permission.';

test('an approval nobody answered says no approver answered within the timeout, and that calling again asks again', async () => {
  const started = Date.now();
  const response = await deploy('unanswered', 'c1');
  expect(Date.now() - started).toBeGreaterThanOrEqual(990);
  expect(modelReads(response)).toEqual({
    error: true,
    tool: 'deploy',
    kind: 'BLOCKED',
    message: 'approval timed out: no approver answered within 1 s, so the call was not executed: changes production',
    recoverable: false,
    attempts: 1,
    retried: false,
    suggestion:
      'Nobody approved or denied this call, so it was not refused: tell the user this action needs someone to approve it; calling it again asks for approval again (and waits again), so call it again once an approver is ready.',
  });
  expect(tools.count('/deploy')).toBe(0);
  // As the suggestion says: the same call again is put to an approver again, and runs once approved.
  const before = asked().length;
  const again = deploy('unanswered', 'c2');
  await until(() => asked().length > before);
  expect((await d.dispatch.resolveApproval({ approvalId: asked()[before]!, approve: true })).resolved).toBe(true);
  expect((await again).results[0]!.output).toBe('{"deployed":true}');
  expect(tools.count('/deploy')).toBe(1);
});

test("a denial reads as it did: not granted, the approver's reason, do not retry", async () => {
  const ran = tools.count('/deploy');
  const before = asked().length;
  const pending = deploy('denied', 'c1');
  await until(() => asked().length > before);
  expect((await d.dispatch.resolveApproval({ approvalId: asked()[before]!, approve: false, reason: 'not during the freeze' })).resolved).toBe(true);
  expect(modelReads(await pending)).toMatchObject({
    kind: 'BLOCKED',
    message: 'approval was not granted: changes production; the approver said: not during the freeze',
    recoverable: false,
    suggestion: DENIED_SUGGESTION,
  });
  const silent = asked().length;
  const quiet = deploy('denied', 'c2');
  await until(() => asked().length > silent);
  expect((await d.dispatch.resolveApproval({ approvalId: asked()[silent]!, approve: false })).resolved).toBe(true);
  expect(modelReads(await quiet)).toMatchObject({ kind: 'BLOCKED', message: 'approval was not granted: changes production', suggestion: DENIED_SUGGESTION });
  expect(tools.count('/deploy')).toBe(ran);
});
