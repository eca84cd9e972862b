import { json, startToolServer, type ToolServer, type TestDispatch } from '../helpers/servers';
import { startApp } from '../helpers/servers';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';

// An agent integrator's probe: an interactive turn whose RPC deadline (3 s) is shorter than the
// approval timeout (120 s by default; the Python example's deadline is 60 s) waited until the
// deadline, and the RPC ended DEADLINE_EXCEEDED with no ErrorInfo: every other call's result of
// the turn was lost, a side effect among them. The wait now ends a margin before the deadline
// (a tenth of the time left, 250 ms to 2 s): the call is BLOCKED as unanswered (not a denial, and
// its tool never reached), the approval is gone, and the turn's other calls keep their results.

jest.setTimeout(20_000);

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/send': json({ sent: true }) });
  d = await startApp(`tools:
  - { name: send, effect: side_effect, concurrency_safe: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/send" } }
  - { name: look, effect: read_only, concurrency_safe: true, input_schema: '{"type":"object"}', builtin: { name: echo } }
policies:
  - { match: send, decide: ask, reason: sends a message }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const turn = (sessionId: string, deadlineMs: number, mode = 2) =>
  d.dispatch.dispatch({ sessionId, mode, interactive: true, calls: [{ id: 'a', name: 'look', arguments: '{"q":1}' }, { id: 'b', name: 'send', arguments: '{"to":"x"}' }, { id: 'c', name: 'look', arguments: '{"q":2}' }] }, { deadlineMs });

test.each([
  ['a parallel turn', 2],
  ['a sequential turn', 1],
])("%s whose deadline comes before the approval timeout is answered before it, the unanswered call BLOCKED and the others' results kept", async (_what, mode) => {
  const started = Date.now();
  const { results } = await turn(`s${mode}`, 3_000, mode);
  const took = Date.now() - started;
  expect(took).toBeGreaterThan(2_400);
  expect(took).toBeLessThan(3_000);
  expect(results.map((r) => r.toolCallId)).toEqual(['a', 'b', 'c']);
  expect(results[0]).toMatchObject({ isError: false, output: '{"q":1}' });
  expect(results[2]).toMatchObject({ isError: false, output: '{"q":2}' });
  expect(results[1]!.error).toMatchObject({ kind: ErrorKind.BLOCKED, recoverable: false });
  expect(results[1]!.error?.message).toMatch(/^approval was not given within the 2\.\d+ s this turn's deadline left for it \(the approval timeout is 120 s\), so the call was not executed: sends a message$/);
  expect(results[1]!.error?.suggestion).toMatch(/^Nobody approved or denied this call in the time this turn allowed, so it was not refused/);
  expect((await d.dispatch.listApprovals({})).approvals).toEqual([]);
  expect(tools.count()).toBe(0);
});

test('the wait is listed as ending when it does, a margin before the deadline, and an approval after it resolves nothing', async () => {
  const before = Date.now();
  const pending = turn('listed', 3_000);
  let listed = (await d.dispatch.listApprovals({})).approvals;
  while (listed.length === 0 && Date.now() - before < 2_000) {
    await new Promise((r) => setTimeout(r, 20));
    listed = (await d.dispatch.listApprovals({})).approvals;
  }
  const endsAt = Number(listed[0]!.expiresAt!.seconds) * 1000 + listed[0]!.expiresAt!.nanos / 1e6;
  expect(endsAt).toBeLessThanOrEqual(before + 2_750);
  expect(endsAt).toBeGreaterThan(before + 2_000);
  await pending;
  expect((await d.dispatch.resolveApproval({ approvalId: listed[0]!.approvalId, approve: true })).resolved).toBe(false);
  expect(tools.count()).toBe(0);
});

test('an approval within the time left runs the call as ever', async () => {
  const pending = turn('approved', 5_000);
  let listed = (await d.dispatch.listApprovals({ sessionId: 'approved' })).approvals;
  while (listed.length === 0) {
    await new Promise((r) => setTimeout(r, 20));
    listed = (await d.dispatch.listApprovals({ sessionId: 'approved' })).approvals;
  }
  expect((await d.dispatch.resolveApproval({ approvalId: listed[0]!.approvalId, approve: true })).resolved).toBe(true);
  const { results } = await pending;
  expect(results[1]).toMatchObject({ isError: false, output: '{"sent":true}' });
});
