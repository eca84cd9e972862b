// Approvals audit: dispatchctl's default --timeout (120 s) was dispatchd's default approval timeout
// (limits.approval_timeout_ms, 120 s). dispatchd bounds an approval's wait by the call's deadline
// (ListApprovals' expires_at is the sooner of the two), and the deadline, set before the request
// was sent, came first: an interactive `dispatchctl dispatch` nobody approved ended
// DEADLINE_EXCEEDED, its results lost, instead of printing the BLOCKED result. `call` and
// `dispatch` now default to 180 s: past the approval timeout and a tool's default timeout (30 s).
// The full app over real gRPC on loopback, dispatchctl's main in this process; the policy
// endpoint (which asks, 300 ms late, so that the wait begins well after the request) and the tool
// are real HTTP servers on loopback. What the deadline is shows in the waiting approval's expiry.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import type { PendingApproval } from '../../gen/dispatch/v1/dispatch_pb';
import { DEFAULT_LIMITS } from '../../src/options/limits';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';

jest.setTimeout(40_000);

/** A tool's timeout when its spec names none (README: `timeout_ms`, default 30000). */
const TOOL_TIMEOUT_MS = 30_000;

let tools: ToolServer;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctl-approval-timeout-'));
  tools = await startToolServer({
    '/deploy': json({ deployed: true }),
    '/policy': json({ decision: 'ask', reason: 'changes production' }, 300),
  });
});
afterAll(async () => {
  await tools?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The app, its approval timeout `limits` (none: the default), with the policy endpoint asking about deploy. */
const start = (limits = '') =>
  startApp(`
tools:
  - { name: deploy, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/deploy" } }
policies:
  - match: deploy
    endpoint: { url: "${tools.url}/policy" }
${limits}`);

const ms = (t: Timestamp | undefined) => Number(t!.seconds) * 1000 + Math.floor(t!.nanos / 1e6);

/** Runs `dispatchctl [flags] dispatch FILE` on an interactive turn of one deploy call; its approval once listed, and the run. */
async function waiting(d: Awaited<ReturnType<typeof start>>, session: string, flags: string[] = []) {
  const file = join(dir, `${session}.json`);
  writeFileSync(file, JSON.stringify({ session_id: session, interactive: true, calls: [{ id: 'c1', name: 'deploy', arguments: { env: 'production' } }] }));
  const started = Date.now();
  const run = dispatchctlAt(() => d.address)(...flags, 'dispatch', file);
  let approval: PendingApproval | undefined;
  while (approval === undefined) {
    if (Date.now() - started > 15_000) throw new Error(`no approval of ${session} listed in 15 s`);
    approval = (await d.dispatch.listApprovals({ sessionId: session })).approvals[0];
    if (approval === undefined) await new Promise((r) => setTimeout(r, 20));
  }
  return { started, approval, run };
}

test("with dispatchd's default approval timeout, the wait of dispatchctl dispatch ends by that timeout, not by dispatchctl's deadline; the call ends BLOCKED", async () => {
  const d = await start();
  try {
    const { approval, run } = await waiting(d, 'default-timeout');
    expect(ms(approval.expiresAt) - ms(approval.requestedAt)).toBe(DEFAULT_LIMITS.approvalTimeoutMs);
    // Denied (rather than waiting 120 s): dispatchctl prints the BLOCKED result, exit 3.
    expect((await d.dispatch.resolveApproval({ approvalId: approval.approvalId, approve: false, reason: 'not now' })).resolved).toBe(true);
    const done = await run;
    expect(done.code).toBe(3);
    expect(done.out).toMatch(/^✗ c1 deploy: BLOCKED [^]*approval was not granted: changes production; the approver said: not now/);
    expect(tools.count('/deploy')).toBe(0);
  } finally {
    await d.close();
  }
});

test("call and dispatch's default deadline outlasts dispatchd's default approval timeout and a tool's default timeout; --timeout still sets it", async () => {
  // An approval timeout of an hour: the wait ends by the call's deadline, which its expiry then shows.
  const d = await start('limits: { approval_timeout_ms: 3600000 }');
  try {
    const byDefault = await waiting(d, 'default-deadline');
    const deadline = ms(byDefault.approval.expiresAt) - byDefault.started;
    expect(deadline).toBeGreaterThan(DEFAULT_LIMITS.approvalTimeoutMs + TOOL_TIMEOUT_MS);
    // Less the margin the wait keeps before the deadline (approval-deadline.ts: at most 2 s).
    expect(deadline).toBeGreaterThan(177_000);
    // The server's deadline is read from the request's grpc-timeout: a few ms later than the client's at most.
    expect(deadline).toBeLessThan(180_500);
    const given = await waiting(d, 'given-deadline', ['--timeout', '20']);
    expect(ms(given.approval.expiresAt) - given.started).toBeGreaterThan(17_000);
    expect(ms(given.approval.expiresAt) - given.started).toBeLessThan(20_500);
    for (const { approval, run } of [byDefault, given]) {
      expect((await d.dispatch.resolveApproval({ approvalId: approval.approvalId, approve: true })).resolved).toBe(true);
      expect(await run).toMatchObject({ code: 0, err: '' });
    }
    expect(tools.count('/deploy')).toBe(2);
  } finally {
    await d.close();
  }
});
