import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, json, type TestDispatch, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// docs/policies.md, "Session budgets": "A call answered from its idempotency record runs nothing
// and is neither counted nor refused". A call put to an approver is counted before it is asked;
// when, while it waited, an identical call of its session (another Dispatch: a backend that retried
// the turn) was approved and ran, the approved call is answered from that call's record (a replay,
// nothing run), but its count taken before asking stayed spent: one action spent two of the
// session's budget, and the session's next call was refused "this session has used its budget"
// although one call had run. Both stores; the full app over real gRPC, a real HTTP tool.

jest.setTimeout(30_000);

let redis: TestRedis;
let tools: ToolServer;
const opened: TestDispatch[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/charge': json({ charged: true }) });
});
afterAll(async () => {
  for (const d of opened) await d.close();
  await tools.close();
  await redis.close();
});

const yaml = () => `
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object","properties":{"amount":{"type":"number"}}}'
    http: { url: "${tools.url}/charge" }
policies:
  - match: charge
    budget: { max_calls_per_session: 2 }
  - match: charge
    decide: ask
    reason: payments need an ok
limits: { approval_timeout_ms: 10000 }
`;

const charge = (d: TestDispatch, sessionId: string, id: string, amount: number) =>
  d.dispatch.dispatch({ sessionId, interactive: true, calls: [{ id, name: 'charge', arguments: JSON.stringify({ amount }) }] });

test.each([
  ['the memory store', false],
  ['Redis', true],
])('with %s, an approved call replayed from an identical call that ran meanwhile gives its count back', async (_store, shared) => {
  const d = await startApp(yaml(), shared ? { redisUrl: redis.url } : {});
  opened.push(d);
  const session = `s-${shared}`;
  const before = tools.count('/charge');
  const first = charge(d, session, 'a', 5);
  const retried = charge(d, session, 'b', 5);
  const waits = await until(async () => {
    const listed = (await d.dispatch.listApprovals({ sessionId: session })).approvals;
    return listed.length === 2 ? listed : undefined;
  }, 'both identical calls asked about');
  const byCall = new Map(waits.map((w) => [w.toolCallId, w.approvalId]));
  expect((await d.dispatch.resolveApproval({ approvalId: byCall.get('a')!, approve: true })).resolved).toBe(true);
  expect((await first).results[0]!.isError).toBe(false);
  expect((await d.dispatch.resolveApproval({ approvalId: byCall.get('b')!, approve: true })).resolved).toBe(true);
  const replayed = (await retried).results[0]!;
  expect([replayed.isError, replayed.idempotentReplay]).toEqual([false, true]);
  // Nor is it told it spent the session's last call.
  expect(replayed.warnings.filter((w) => w.includes('budget'))).toEqual([]);
  expect(tools.count('/charge') - before).toBe(1);
  // One charge ran: one call of the budget of 2 is left, and the next call is asked about, not refused.
  const next = charge(d, session, 'c', 7);
  const asked = await until(async () => (await d.dispatch.listApprovals({ sessionId: session })).approvals[0], 'the next call asked about', 5_000).catch(() => undefined);
  if (asked) await d.dispatch.resolveApproval({ approvalId: asked.approvalId, approve: true });
  const result = (await next).results[0]!;
  expect(result.error?.kind === ErrorKind.BLOCKED ? result.error.message : 'not refused').toBe('not refused');
  expect(result.isError).toBe(false);
  expect(tools.count('/charge') - before).toBe(2);
});
