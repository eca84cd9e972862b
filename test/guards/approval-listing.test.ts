import { createHash } from 'node:crypto';
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startToolServer, json, type TestDispatch, type ToolServer } from '../helpers/servers';
import { tapEvents, type EventTap } from '../events/event-tap';
import type { App } from '../../src/app';
import { until as waitUntil } from '../helpers/until';
import { until } from './helpers';
import { dispatchctlAt } from '../helpers/dispatchctl';

// An approver must see what it approves, and find every wait it has not answered. APPROVAL_REQUESTED
// carries the arguments that run if approved (after a `modify` policy, secrets redacted) and
// whether a policy changed them, also to a subscriber that joined after the turn began;
// ListApprovals lists the caller's tenant's waits with the same, filtered by session and tool,
// until they are decided, time out or their session ends. The memory store, one replica.

jest.setTimeout(30_000);

const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const ACME = { authorization: 'Bearer tok-acme' };
const GLOBEX = { authorization: 'Bearer tok-globex' };
const SECRET = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';

let tools: ToolServer;
let releaseSlow: () => void = () => {};
const opened: (TestDispatch & { app: App })[] = [];
const taps: EventTap[] = [];

beforeAll(async () => {
  tools = await startToolServer({
    '/charge': json({ charged: true }),
    '/refund': json({ refunded: true }),
    '/slow': async (_req, res) => {
      await new Promise<void>((resolve) => (releaseSlow = resolve));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"slow":true}');
    },
  });
});
afterAll(async () => {
  releaseSlow();
  for (const tap of taps) tap.close();
  for (const d of opened) await d.close();
  await tools.close();
});

async function start(timeoutMs: number, maxMessageBytes = 4 * 1024 * 1024): Promise<TestDispatch> {
  const yaml = `
auth:
  tokens:
    - { tenant: acme, scopes: [dispatch, subscribe], sha256: ${sha('tok-acme')} }
    - { tenant: globex, scopes: [dispatch, subscribe], sha256: ${sha('tok-globex')} }
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object","properties":{"amount":{"type":"number"},"memo":{"type":"string"},"api_key":{"type":"string"}}}'
    http: { url: "${tools.url}/charge" }
  - name: refund
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/refund" }
  - name: slow
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/slow" }
policies:
  - match: charge
    decide: modify
    set: { /memo: audited }
  - match: charge
    when: [{ pointer: /amount, op: ">=", value: 100 }]
    decide: ask
    reason: large payment
  - match: refund
    decide: ask
    reason: refunds need an ok
limits: { approval_timeout_ms: ${timeoutMs}, max_message_bytes: ${maxMessageBytes}, max_calls_per_turn: 32 }
`;
  const d = await startApp(yaml);
  opened.push(d);
  return d;
}

async function tap(d: TestDispatch, metadata: Record<string, string>): Promise<EventTap> {
  const t = await tapEvents(d.address, {}, metadata);
  taps.push(t);
  return t;
}

const asked = (events: readonly Event[]) => events.filter((e) => e.kind === EventKind.APPROVAL_REQUESTED);
const ms = (t: Timestamp | undefined) => Number(t!.seconds) * 1000 + Math.round(t!.nanos / 1e6);
const listed = async (d: TestDispatch, filter: { sessionId?: string; tool?: string } = {}, metadata = ACME) => (await d.dispatch.listApprovals(filter, { metadata })).approvals;

test('APPROVAL_REQUESTED and ListApprovals show the arguments that run; filters, tenants, and decided or ended waits', async () => {
  const d = await start(10_000);
  const events = await tap(d, ACME);
  const before = Date.now();
  const charge = d.dispatch.dispatch({ sessionId: 's1', interactive: true, calls: [{ id: 'c1', name: 'charge', arguments: JSON.stringify({ amount: 150, api_key: SECRET }) }] }, { metadata: ACME });
  const refund = d.dispatch.dispatch({ sessionId: 's2', interactive: true, calls: [{ id: 'r1', name: 'refund', arguments: '{"order":7}' }] }, { metadata: ACME });
  const theirs = d.dispatch.dispatch({ sessionId: 's1', interactive: true, calls: [{ id: 'g1', name: 'refund', arguments: '{"order":9}' }] }, { metadata: GLOBEX });
  await events.waitFor((e) => asked(e).length === 2);

  const [chargeEvent, refundEvent] = ['c1', 'r1'].map((id) => asked(events.events).find((e) => e.toolCallId === id)!);
  const chargeArgs = JSON.parse(chargeEvent!.attributes['dispatch.arguments']!) as Record<string, unknown>;
  expect(chargeArgs).toMatchObject({ amount: 150, memo: 'audited' });
  expect(chargeArgs.api_key).toMatch(/^\[REDACTED:/);
  expect(chargeEvent!.attributes['dispatch.arguments.modified']).toBe('true');
  expect(refundEvent!.attributes).toMatchObject({ 'dispatch.arguments': '{"order":7}', 'dispatch.arguments.modified': 'false' });
  expect(JSON.stringify(events.events.map((e) => e.attributes))).not.toContain(SECRET);

  const all = await listed(d);
  expect(all.map((a) => a.toolCallId).sort()).toEqual(['c1', 'r1']);
  const chargeWait = all.find((a) => a.toolCallId === 'c1')!;
  expect(chargeWait).toMatchObject({
    approvalId: chargeEvent!.attributes['dispatch.approval_id'],
    sessionId: 's1',
    tool: 'charge',
    arguments: chargeEvent!.attributes['dispatch.arguments'],
    argumentsModified: true,
    reason: 'large payment',
  });
  expect(ms(chargeWait.requestedAt)).toBeGreaterThanOrEqual(before - 5);
  expect(ms(chargeWait.expiresAt) - ms(chargeWait.requestedAt)).toBe(10_000);
  expect((await listed(d, { sessionId: 's2' })).map((a) => a.toolCallId)).toEqual(['r1']);
  expect((await listed(d, { tool: 'charge' })).map((a) => a.toolCallId)).toEqual(['c1']);
  expect(await listed(d, { sessionId: 's1', tool: 'refund' })).toEqual([]);

  // Another tenant sees its own wait only, and cannot decide acme's.
  const globexList = await listed(d, {}, GLOBEX);
  expect(globexList.map((a) => [a.toolCallId, a.sessionId])).toEqual([['g1', 's1']]);
  expect((await d.dispatch.resolveApproval({ approvalId: chargeWait.approvalId, approve: true }, { metadata: GLOBEX })).resolved).toBe(false);

  expect((await d.dispatch.resolveApproval({ approvalId: chargeWait.approvalId, approve: true }, { metadata: ACME })).resolved).toBe(true);
  expect((await charge).results[0]!.isError).toBe(false);
  expect(tools.received.find((r) => r.path === '/charge')!.body.arguments).toEqual({ amount: 150, api_key: SECRET, memo: 'audited' });
  expect((await listed(d)).map((a) => a.toolCallId)).toEqual(['r1']);

  await d.dispatch.endSession({ sessionId: 's2' }, { metadata: ACME });
  expect(JSON.parse((await refund).results[0]!.output)).toMatchObject({ kind: 'BLOCKED' });
  expect(await listed(d)).toEqual([]);
  expect((await listed(d, {}, GLOBEX)).length).toBe(1);
  expect((await d.dispatch.resolveApproval({ approvalId: globexList[0]!.approvalId, approve: false }, { metadata: GLOBEX })).resolved).toBe(true);
  await theirs;
  expect(await listed(d, {}, GLOBEX)).toEqual([]);
});

test('a wait that timed out is no longer listed', async () => {
  const d = await start(600);
  const pending = d.dispatch.dispatch({ sessionId: 't', interactive: true, calls: [{ id: 'c1', name: 'refund', arguments: '{}' }] }, { metadata: ACME });
  const first = await waitUntil(async () => {
    const found = await listed(d);
    return found.length > 0 ? found : undefined;
  }, 'the wait listed', 3_000);
  expect(first.map((a) => a.toolCallId)).toEqual(['c1']);
  expect(JSON.parse((await pending).results[0]!.output)).toMatchObject({ kind: 'BLOCKED', message: 'approval timed out: no approver answered within 0.6 s, so the call was not executed: refunds need an ok' });
  expect(await listed(d)).toEqual([]);
});

test('a subscriber that joined after the turn began still gets APPROVAL_REQUESTED, with the arguments', async () => {
  const d = await start(10_000);
  const slowBefore = tools.count('/slow');
  // Nobody of acme watches when the turn begins: its observer is the lean one.
  const turn = d.dispatch.dispatch({ sessionId: 'late', interactive: true, calls: [{ id: 'w', name: 'slow', arguments: '{}' }, { id: 'c2', name: 'charge', arguments: '{"amount":500}' }] }, { metadata: ACME });
  await until(() => tools.count('/slow') === slowBefore + 1);
  const late = await tap(d, ACME);
  releaseSlow();
  await late.waitFor((e) => asked(e).length === 1);
  const event = asked(late.events)[0]!;
  expect(event).toMatchObject({ sessionId: 'late', toolCallId: 'c2', tool: 'charge' });
  expect(event.attributes).toMatchObject({ 'dispatch.arguments': '{"amount":500,"memo":"audited"}', 'dispatch.arguments.modified': 'true', 'dispatch.reason': 'large payment' });
  expect((await d.dispatch.resolveApproval({ approvalId: event.attributes['dispatch.approval_id']!, approve: false }, { metadata: ACME })).resolved).toBe(true);
  await turn;
});

test('dispatchctl approvals prints the waits, --session filters', async () => {
  const d = await start(10_000);
  const ctl = dispatchctlAt(() => d.address);
  const pending = d.dispatch.dispatch({ sessionId: 'ctl', interactive: true, calls: [{ id: 'c9', name: 'charge', arguments: '{"amount":900}' }] }, { metadata: ACME });
  const [wait] = await waitUntil(async () => {
    const found = await listed(d);
    return found.length > 0 ? found : undefined;
  }, 'the wait listed', 3_000);
  const shown = await ctl('--token', 'tok-acme', 'approvals', '--session', 'ctl');
  expect(shown.code).toBe(0);
  expect(shown.out).toMatch(new RegExp(`^${wait!.approvalId}  session ctl  call c9  charge  expires in (9|10)s\\n  reason: large payment\\n  arguments: \\{"amount":900,"memo":"audited"\\}  \\(modified by a policy\\)$`));
  expect((await ctl('--token', 'tok-acme', 'approvals', '--session', 'other')).out).toBe('(no approvals waiting)');
  await d.dispatch.resolveApproval({ approvalId: wait!.approvalId, approve: false }, { metadata: ACME });
  await pending;
});

test('an answer holds no more than fit in max_message_bytes, and says it was cut; each entry\'s arguments are cut to 2,000 characters (its event keeps 8,000)', async () => {
  const d = await start(10_000, 16_384);
  const events = await tap(d, ACME);
  const note = 'x'.repeat(7_000);
  const pending = Array.from({ length: 12 }, (_, i) => d.dispatch.dispatch({ sessionId: `big${i}`, interactive: true, calls: [{ id: `b${i}`, name: 'refund', arguments: JSON.stringify({ note }) }] }, { metadata: ACME }));
  const response = await waitUntil(async () => {
    const answer = await d.dispatch.listApprovals({}, { metadata: ACME });
    return answer.truncated ? answer : undefined;
  }, 'a truncated answer', 5_000);
  // About 7 of 2 KB fit in 16 KiB, less a little room.
  expect(response.approvals.length).toBeGreaterThanOrEqual(5);
  expect(response.approvals.length).toBeLessThan(12);
  expect(response.approvals[0]!.arguments).toBe(`${JSON.stringify({ note }).slice(0, 2_000)}...`);
  await events.waitFor((e) => asked(e).length === 12);
  expect(asked(events.events)[0]!.attributes['dispatch.arguments']).toBe(JSON.stringify({ note }));
  const narrowed = await d.dispatch.listApprovals({ sessionId: 'big11' }, { metadata: ACME });
  expect([narrowed.truncated, narrowed.approvals.map((a) => a.toolCallId)]).toEqual([false, ['b11']]);
  for (let i = 0; i < 12; i++) await d.dispatch.endSession({ sessionId: `big${i}` }, { metadata: ACME });
  await Promise.all(pending);
});

test('an answer holds at most 100 waits, the first to expire first, and says more wait', async () => {
  const d = await start(10_000);
  const pending = Array.from({ length: 110 }, (_, i) => d.dispatch.dispatch({ sessionId: `many${i}`, interactive: true, calls: [{ id: `m${i}`, name: 'refund', arguments: '{}' }] }, { metadata: ACME }));
  const answer = await waitUntil(async () => {
    const found = await d.dispatch.listApprovals({}, { metadata: ACME });
    return found.approvals.length >= 100 ? found : undefined;
  }, '100 waits listed', 5_000);
  expect([answer.approvals.length, answer.truncated]).toEqual([100, true]);
  const expiries = answer.approvals.map((a) => ms(a.expiresAt));
  expect(expiries).toEqual([...expiries].sort((x, y) => x - y));
  expect((await d.dispatch.listApprovals({ tool: 'refund', sessionId: 'many105' }, { metadata: ACME })).approvals.map((a) => a.toolCallId)).toEqual(['m105']);
  for (let i = 0; i < 110; i++) await d.dispatch.endSession({ sessionId: `many${i}` }, { metadata: ACME });
  await Promise.all(pending);
});
