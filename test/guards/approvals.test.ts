import { createApprovals, createPostHook } from '../../src/guards';
import type { PostHookInput } from '../../src/pipeline';
import type { ResolvedTool } from '../../src/registry';

const live = () => new AbortController().signal;

test('an approval is decided once, only by its own tenant', async () => {
  const approvals = createApprovals();
  const waiting = approvals.wait('a1', live(), 'acme');
  expect(approvals.pending()).toBe(1);
  expect(approvals.resolve('a1', true, 'globex')).toBe(false);
  expect(approvals.resolve('a1', true, 'acme')).toBe(true);
  expect(approvals.resolve('a1', false, 'acme')).toBe(false);
  expect(await waiting).toBe(true);
  expect(approvals.pending()).toBe(0);
});

test('timeout, abort, overflow and close all refuse', async () => {
  const approvals = createApprovals({ timeoutMs: 30, maxPending: 2 });
  const timedOut = approvals.wait('t', live(), 'x');
  const controller = new AbortController();
  const aborted = approvals.wait('ab', controller.signal, 'x');
  expect(await approvals.wait('overflow', live(), 'x')).toBe(false);
  controller.abort();
  expect(await aborted).toBe(false);
  expect(await timedOut).toBe(false);
  const closing = createApprovals();
  const pending = closing.wait('c', live());
  closing.close();
  expect(await pending).toBe(false);
});

test('decided hears how each wait ended: approved or denied by whom with what, expired, cancelled (a deadline\'s abort is named by the pipeline)', async () => {
  const approvals = createApprovals({ timeoutMs: 40 });
  const heard: unknown[] = [];
  const hear = (decision: unknown) => void heard.push(decision);
  const request = { sessionId: 's', toolCallId: 'c', tool: 't', arguments: '{}', argumentsModified: false, reason: 'r' };
  const yes = approvals.wait('yes', live(), 'acme', undefined, request, hear);
  approvals.resolve('yes', true, 'acme', 'fine');
  await yes;
  const no = approvals.wait('no', live(), 'acme', undefined, request, hear);
  approvals.resolve('no', false, 'acme');
  await no;
  await approvals.wait('late', live(), 'acme', undefined, request, hear);
  const controller = new AbortController();
  const gone = approvals.wait('gone', controller.signal, 'acme', undefined, request, hear);
  controller.abort();
  await gone;
  const shut = approvals.wait('shut', live(), 'acme', undefined, request, hear);
  approvals.close();
  await shut;
  expect(heard).toEqual([
    { decision: 'approved', decidedBy: 'acme', reason: 'fine' },
    { decision: 'denied', decidedBy: 'acme' },
    { decision: 'expired' },
    { decision: 'cancelled' },
    { decision: 'cancelled' },
  ]);
});

test('one tenant cannot take every place: past its own cap its asks are refused, another tenant\'s still wait', async () => {
  const approvals = createApprovals({ timeoutMs: 10_000, maxPending: 10, maxPendingPerTenant: 3 });
  const announced: string[] = [];
  const waits = ['a1', 'a2', 'a3', 'a4'].map((id) => approvals.wait(id, live(), 'greedy', () => announced.push(id)));
  expect(announced).toEqual(['a1', 'a2', 'a3']);
  expect(await waits[3]).toBe(false);
  const other = approvals.wait('b1', live(), 'modest', () => announced.push('b1'));
  expect(announced).toEqual(['a1', 'a2', 'a3', 'b1']);
  expect(approvals.resolve('b1', true, 'modest')).toBe(true);
  expect(await other).toBe(true);
  // A place given back (decided) is free again for the tenant.
  expect(approvals.resolve('a1', false, 'greedy')).toBe(true);
  expect(await waits[0]).toBe(false);
  const again = approvals.wait('a5', live(), 'greedy', () => announced.push('a5'));
  expect(announced).toContain('a5');
  approvals.close();
  expect(await again).toBe(false);
});

test('with a pending record, a wait is announced only once recorded (not when cut short meanwhile), and forgotten when it ends', async () => {
  const approvals = createApprovals({ timeoutMs: 10_000 });
  const log: string[] = [];
  const written: (() => void)[] = [];
  approvals.recordWith({
    record: (id, tenant, ttlMs) => new Promise<void>((resolve) => written.push(() => (log.push(`recorded ${id} ${tenant} ${ttlMs}`), resolve()))),
    forget: (id) => void log.push(`forgot ${id}`),
  });
  const settled = () => new Promise((r) => setImmediate(r));
  const decided = approvals.wait('a', live(), 'acme', () => log.push('announced a'));
  await settled();
  expect(log).toEqual([]);
  written[0]!();
  await settled();
  expect(log).toEqual(['recorded a acme 10000', 'announced a']);
  expect(approvals.resolve('a', true, 'acme')).toBe(true);
  await expect(decided).resolves.toBe(true);
  expect(log.at(-1)).toBe('forgot a');

  const controller = new AbortController();
  const cut = approvals.wait('b', controller.signal, 'acme', () => log.push('announced b'));
  controller.abort();
  await expect(cut).resolves.toBe(false);
  written[1]!();
  await settled();
  expect(log.slice(3)).toEqual(['forgot b', 'recorded b acme 10000']);
});

test('list: a tenant\'s waits with what they run, filtered by session and tool, until they end; the record gets the same', async () => {
  const approvals = createApprovals({ timeoutMs: 10_000 });
  const recorded: unknown[] = [];
  approvals.recordWith({ record: async (_id, _tenant, _ttl, shown) => void recorded.push(shown), forget() {} });
  const request = (sessionId: string, tool: string) => ({ sessionId, toolCallId: `${sessionId}-${tool}`, tool, arguments: '{"a":1}', argumentsModified: tool === 'pay', reason: 'why' });
  const before = Date.now();
  const pay = approvals.wait('p', live(), 'acme', undefined, request('s1', 'pay'));
  void approvals.wait('m', live(), 'acme', undefined, request('s2', 'mail'));
  void approvals.wait('g', live(), 'globex', undefined, request('s1', 'pay'));
  expect(approvals.list('acme').map((a) => a.approvalId)).toEqual(['p', 'm']);
  expect(approvals.list('acme', { sessionId: 's2' }).map((a) => a.approvalId)).toEqual(['m']);
  expect(approvals.list('acme', { tool: 'pay' }).map((a) => a.approvalId)).toEqual(['p']);
  expect(approvals.list('acme', { sessionId: 's2', tool: 'pay' })).toEqual([]);
  const [first] = approvals.list('acme');
  expect(first).toMatchObject({ approvalId: 'p', sessionId: 's1', toolCallId: 's1-pay', tool: 'pay', arguments: '{"a":1}', argumentsModified: true, reason: 'why' });
  expect(first!.requestedAt).toBeGreaterThanOrEqual(before);
  expect(first!.expiresAt - first!.requestedAt).toBe(10_000);
  expect(recorded[0]).toEqual(first);
  expect(approvals.resolve('p', true, 'acme')).toBe(true);
  await expect(pay).resolves.toBe(true);
  expect(approvals.list('acme').map((a) => a.approvalId)).toEqual(['m']);
  expect(approvals.list('globex').map((a) => a.approvalId)).toEqual(['g']);
  approvals.close();
  expect(approvals.list('acme')).toEqual([]);
});

test('post hooks: after rules by tool, outcome and text; a failing hook adds nothing and does not fail', async () => {
  const warned: string[] = [];
  const logger = { debug() {}, info() {}, warn: (m: string) => void warned.push(m), error() {} };
  const hook = createPostHook(
    [
      { match: ['search*'], on: 'error', warn: 'search failed' },
      { match: ['*'], on: 'any', contains: 'TODO', warn: 'unfinished' },
    ],
    [async () => { throw new Error('hook bug'); }, async ({ output }) => (output.length > 5 ? ['long'] : [])],
    logger,
  );
  const input = (name: string, output: string, isError: boolean) => ({ tenant: 't', sessionId: 's', tool: { name } as ResolvedTool, args: {}, attempt: 1, output, isError }) as PostHookInput;
  expect(await hook(input('search_web', 'TODO', true))).toEqual(['search failed', 'unfinished']);
  expect(await hook(input('search_web', 'fine but long', false))).toEqual(['long']);
  expect(warned).toEqual(['post-tool hook failed', 'post-tool hook failed']);
});
