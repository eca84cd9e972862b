import { PLUGINS } from '../../src/app';
import { createGuardsPlugin, guardsPlugin } from '../../src/app/plugins/guards-plugin';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, json, type TestDispatch, type ToolServer } from '../helpers/servers';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { until } from '../helpers/until';

// ListApprovals with Redis lists the approvals waiting on every replica (approvals-index.ts). One
// whose replica is gone (killed, or cut off from Redis: it can neither forget it nor be reached by
// a decision) was listed on the others until its wait would have ended (up to
// approval_timeout_ms, 120 s by default), and resolving it did nothing. Each replica now renews a
// lease in each tenant's index while it holds waits of that tenant; an approval whose replica's
// lease lapsed is not listed. Replica A reaches Redis through a proxy the test cuts (as a SIGKILL
// leaves it: nothing forgotten, no lease renewed); B lists. A short lease here (15 s by default).

jest.setTimeout(20_000);

const LEASE_MS = 2000;

let redis: TestRedis;
let tools: ToolServer;
let proxy: TcpProxy;
const apps: TestDispatch[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/charge': json({ charged: true }) });
  proxy = await startTcpProxy(redis.port);
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await proxy?.close();
  await tools?.close();
  await redis?.close();
});

const yaml = () => `
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/charge" }
policies:
  - { match: charge, decide: ask, reason: payments need an ok }
limits: { approval_timeout_ms: 15000 }
`;

const start = async (redisUrl: string) => {
  const factories = PLUGINS.map((factory) => (factory === guardsPlugin ? createGuardsPlugin({ approvalsLeaseMs: LEASE_MS }) : factory));
  const app = await startApp(yaml(), { redisUrl }, factories);
  apps.push(app);
  return app;
};

test('an approval whose replica is gone is no longer listed on the others, one whose replica lives stays listed', async () => {
  const a = await start(`redis://127.0.0.1:${proxy.port}`);
  const b = await start(redis.url);
  const pending = a.dispatch.dispatch({ sessionId: 'gone', interactive: true, calls: [{ id: 'c1', name: 'charge', arguments: '{}' }] }).catch((error: Error) => error);
  const wait = await until(async () => (await b.dispatch.listApprovals({})).approvals[0], 'the wait listed on B');
  // Past a lease: A renews it, so B still lists the wait.
  await new Promise((r) => setTimeout(r, LEASE_MS + 300));
  expect((await b.dispatch.listApprovals({})).approvals.map((x) => x.approvalId)).toEqual([wait.approvalId]);
  proxy.cut();
  const cutAt = Date.now();
  await until(async () => ((await b.dispatch.listApprovals({})).approvals.length === 0 ? true : undefined), 'the gone replica\'s wait unlisted on B', 6_000);
  // Well before its wait would have ended (15 s).
  expect(Date.now() - cutAt).toBeLessThan(6_000);
  expect(tools.count('/charge')).toBe(0);
  // A, cut off, still holds its wait: closing it ends the call (nothing ran).
  await a.close();
  apps.splice(apps.indexOf(a), 1);
  expect(await pending).toBeInstanceOf(Error);
  expect(tools.count('/charge')).toBe(0);
});
