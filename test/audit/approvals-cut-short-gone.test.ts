import { status, type ServiceError } from '@grpc/grpc-js';
import { startApp, startToolServer, json, type TestDispatch, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// docs/policies.md: a wait cut short by the client's cancel or the RPC deadline "is no refusal
// ... and the approval is gone (ResolveApproval answers resolved=false, as after a timeout)", and
// "A decided, timed out, cut short or ended wait is no longer listed". Tested with Redis
// (test/redis/approvals-pending-key.test.ts); this is the memory store's case, one replica, real
// gRPC: after the cut, the id is listed nowhere, an approval of it answers resolved=false, and the
// tool never runs.

jest.setTimeout(20_000);

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/charge': json({ charged: true }) });
  d = await startApp(`
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/charge" }
policies:
  - match: charge
    decide: ask
    reason: payments need an ok
limits: { approval_timeout_ms: 30000 }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const listedIn = (sessionId: string) => until(async () => (await d.dispatch.listApprovals({ sessionId })).approvals[0], `the wait of ${sessionId} listed`);

test.each([
  ["the client's cancel", 'cancel', status.CANCELLED],
  // Ended a margin before the deadline since approval-deadline.ts: the RPC answers, the call BLOCKED unanswered.
  ['the RPC deadline', 'deadline', undefined],
] as const)('a wait cut short by %s is gone: not listed, resolved=false, nothing runs', async (_what, sessionId, code) => {
  const controller = new AbortController();
  const options = sessionId === 'cancel' ? { signal: controller.signal } : { deadlineMs: 1_500 };
  const pending = d.dispatch.dispatch({ sessionId, interactive: true, calls: [{ id: 'c1', name: 'charge', arguments: '{}' }] }, options).then(() => undefined, (e: ServiceError) => e);
  const wait = await listedIn(sessionId);
  controller.abort();
  expect((await pending)?.code).toBe(code);
  await until(async () => ((await d.dispatch.listApprovals({ sessionId })).approvals.length === 0 ? true : undefined), 'the wait no longer listed', 3_000);
  expect((await d.dispatch.resolveApproval({ approvalId: wait.approvalId, approve: true })).resolved).toBe(false);
  await new Promise((r) => setTimeout(r, 200));
  expect(tools.count('/charge')).toBe(0);
});
