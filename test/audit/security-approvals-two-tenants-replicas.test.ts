// Approvals of two tenants on two replicas sharing Redis (issue 10 with the guards' approvals):
// tenant B, on either replica, neither lists, decides (approve or deny) nor ends - by ending its own
// session of the same id - tenant A's wait; A decides it from the other replica.
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from '../security/support/auth-app';

jest.setTimeout(30_000);

const A: TestToken = { token: 'approvals-tenant-a-token', tenant: 'tenant-a', scopes: ['dispatch'] };
const B: TestToken = { token: 'approvals-tenant-b-token', tenant: 'tenant-b', scopes: ['dispatch'] };
const SESSION = 'shared-session';

let redis: TestRedis;
let tools: ToolServer;
let one: AuthApp;
let two: AuthApp;

beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/charge': json({ charged: true }) });
  const yaml = `tools:
  - name: charge
    effect: side_effect
    http: { url: "${tools.url}/charge" }
policies:
  - { match: charge, decide: ask, reason: every payment }
limits: { approval_timeout_ms: 20000 }
${authYaml([A, B])}`;
  one = await startAuthApp(yaml, { daemon: { redisUrl: redis.url } });
  two = await startAuthApp(yaml, { daemon: { redisUrl: redis.url } });
});
afterAll(async () => {
  await two.close();
  await one.close();
  await tools.close();
  await redis.close();
});

const listed = async (app: AuthApp, t: TestToken, sessionId = '') => (await app.dispatch.listApprovals({ sessionId }, bearer(t.token))).approvals;

test("tenant B cannot list, decide or end tenant A's approval on either replica; A decides it on the other replica", async () => {
  const pending = one.dispatch.dispatch({ sessionId: SESSION, interactive: true, calls: [{ id: 'c1', name: 'charge', arguments: '{"amount":1}' }] }, bearer(A.token));
  let waits: Awaited<ReturnType<typeof listed>> = [];
  for (let i = 0; i < 100 && waits.length === 0; i++) {
    waits = await listed(two, A);
    if (waits.length === 0) await new Promise((r) => setTimeout(r, 50));
  }
  expect(waits.map((w) => w.toolCallId)).toEqual(['c1']);
  const approvalId = waits[0]!.approvalId;

  for (const app of [one, two]) {
    expect(await listed(app, B)).toEqual([]);
    expect(await listed(app, B, SESSION)).toEqual([]);
    for (const approve of [true, false]) expect((await app.dispatch.resolveApproval({ approvalId, approve }, bearer(B.token))).resolved).toBe(false);
    await app.dispatch.endSession({ sessionId: SESSION }, bearer(B.token));
  }
  // A's wait is untouched: still listed on both replicas, nothing ran.
  for (const app of [one, two]) expect((await listed(app, A)).map((w) => w.approvalId)).toEqual([approvalId]);
  expect(tools.count('/charge')).toBe(0);

  expect((await two.dispatch.resolveApproval({ approvalId, approve: true }, bearer(A.token))).resolved).toBe(true);
  const result = (await pending).results[0]!;
  expect([result.isError, result.output]).toEqual([false, '{"charged":true}']);
  expect(tools.count('/charge')).toBe(1);
});
