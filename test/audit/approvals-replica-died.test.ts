import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDispatchClient } from '../../src/client';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, json, type TestDispatch, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// README ("Several replicas") and docs/policies.md (ListApprovals): an approval whose replica dies
// while its call waits is no longer decidable anywhere: ResolveApproval on another replica finds
// its pending key, hears no confirmation and voids the decision, answering resolved=false within
// the relay's 2 s; nothing runs; the entry stays listed until its wait would have ended, then is
// pruned. A real dispatchd (bin/dispatchd.js) killed with SIGKILL, an in-process replica B, one Redis.

jest.setTimeout(40_000);

let redis: TestRedis;
let tools: ToolServer;
let daemon: Daemon | undefined;
let b: TestDispatch | undefined;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/charge': json({ charged: true }) });
});
afterAll(async () => {
  daemon?.child.kill('SIGKILL');
  await b?.close();
  await tools.close();
  await redis.close();
});

const yaml = () => `
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/charge" }
policies:
  - match: charge
    decide: ask
    reason: payments need an ok
limits: { approval_timeout_ms: 4500 }
`;

test('a wait whose replica died: resolved=false on another replica, nothing runs, listed until it would have ended', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'approvals-died-')), 'dispatch.yaml');
  writeFileSync(file, yaml());
  daemon = await startDaemon(['--config', file, '--redis', redis.url]);
  const a = createDispatchClient(`127.0.0.1:${daemon.port}`);
  b = await startApp(yaml(), { redisUrl: redis.url });
  const pending = a.dispatch({ sessionId: 'died', interactive: true, calls: [{ id: 'c1', name: 'charge', arguments: '{}' }] }).catch((error: Error) => error);
  const wait = await until(async () => (await b!.dispatch.listApprovals({})).approvals[0], 'the wait listed on B');
  daemon.child.kill('SIGKILL');
  await daemon.exited;
  expect(await pending).toBeInstanceOf(Error);
  a.close();
  const started = Date.now();
  expect((await b.dispatch.resolveApproval({ approvalId: wait.approvalId, approve: true })).resolved).toBe(false);
  expect(Date.now() - started).toBeLessThan(4_000);
  const endsAt = Number(wait.expiresAt!.seconds) * 1000 + wait.expiresAt!.nanos / 1e6;
  if (Date.now() < endsAt - 500) expect((await b.dispatch.listApprovals({})).approvals.map((x) => x.approvalId)).toEqual([wait.approvalId]);
  await new Promise((r) => setTimeout(r, Math.max(0, endsAt - Date.now()) + 200));
  expect((await b.dispatch.listApprovals({})).approvals).toEqual([]);
  expect((await b.dispatch.resolveApproval({ approvalId: wait.approvalId, approve: true })).resolved).toBe(false);
  expect(tools.count('/charge')).toBe(0);
});
