import { status, type ServiceError } from '@grpc/grpc-js';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { callOutcomes, ofSession, tapEvents, turnEnded, type EventTap } from '../events/event-tap';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { startMetricsApp, type MetricsApp } from '../telemetry/metrics-app';
import { errorReason, sendToolYaml } from './helpers';

// An approval wait (decide: ask) cut short by the client's cancel, the RPC deadline or dispatchd's
// shutdown is no refusal: the call ends as the RPC does (CANCELLED, DEADLINE_EXCEEDED, UNAVAILABLE
// SHUTTING_DOWN), and its TOOL_POST, the TURN_END and dispatch_tool_calls_total say so. They said
// BLOCKED "approval was not granted" (and the turn ok), and at shutdown the client got that as a
// normal response at the grace's end. The full app over real gRPC, its events and real /metrics;
// the tool (a real HTTP server) is never reached.

jest.setTimeout(20_000);

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/send': json({ sent: true }) });
});
afterAll(() => tools.close());

const yaml = (approvalTimeoutMs: number) => `${sendToolYaml(tools.url)}
limits: { approval_timeout_ms: ${approvalTimeoutMs} }
policies:
  - match: send
    decide: ask
    reason: sends a message
`;

const send = (id: string) => ({ id, name: 'send', arguments: JSON.stringify({ to: id }) });

describe('an approval wait cut short', () => {
  let d: MetricsApp;
  let tap: EventTap;
  beforeAll(async () => {
    d = await startMetricsApp(yaml(60_000));
    tap = await tapEvents(d.address);
  });
  afterAll(async () => {
    tap?.close();
    await d?.close();
  });

  const asked = (sessionId: string) => tap.waitFor((events) => ofSession(events, sessionId).some((e) => e.kind === EventKind.APPROVAL_REQUESTED));

  test("by the client's cancel: CANCELLED, not BLOCKED", async () => {
    const controller = new AbortController();
    const pending = d.dispatch.dispatch({ sessionId: 'cancel', interactive: true, calls: [send('c1')] }, { signal: controller.signal }).then(() => undefined, (e: ServiceError) => e);
    await asked('cancel');
    controller.abort();
    expect((await pending)?.code).toBe(status.CANCELLED);
    await tap.waitFor(turnEnded('cancel'));
    expect(callOutcomes(tap.events, 'cancel')).toEqual({ posts: [['c1', 'CANCELLED', 'CANCELLED']], turn: 'CANCELLED' });
  });

  test("a parallel turn's approvals, by the client's cancel: every call CANCELLED", async () => {
    const controller = new AbortController();
    const pending = d.dispatch.dispatch({ sessionId: 'parallel', mode: 2, interactive: true, calls: [send('p1'), send('p2')] }, { signal: controller.signal }).then(() => undefined, (e: ServiceError) => e);
    await tap.waitFor((events) => ofSession(events, 'parallel').filter((e) => e.kind === EventKind.APPROVAL_REQUESTED).length === 2);
    controller.abort();
    expect((await pending)?.code).toBe(status.CANCELLED);
    await tap.waitFor(turnEnded('parallel'));
    const { posts, turn } = callOutcomes(tap.events, 'parallel');
    expect({ posts: posts.sort(), turn }).toEqual({ posts: [['p1', 'CANCELLED', 'CANCELLED'], ['p2', 'CANCELLED', 'CANCELLED']], turn: 'CANCELLED' });
  });

  // Since the wait ends a margin before the deadline (approval-deadline.ts), the RPC does not end
  // DEADLINE_EXCEEDED: the call is BLOCKED, unanswered (not a denial), and the turn's results kept.
  test('by the RPC deadline: the wait ends before it, the call BLOCKED as unanswered, the RPC answered', async () => {
    const { results } = await d.dispatch.dispatch({ sessionId: 'deadline', interactive: true, calls: [send('d1')] }, { deadlineMs: 500 });
    expect(results[0]!.error?.message).toMatch(/^approval was not given within the 0\.2\d* s this turn's deadline left for it \(the approval timeout is 60 s\), so the call was not executed: sends a message$/);
    await tap.waitFor(turnEnded('deadline'));
    expect(ofSession(tap.events, 'deadline').some((e) => e.kind === EventKind.APPROVAL_REQUESTED)).toBe(true);
    expect(callOutcomes(tap.events, 'deadline').turn).not.toBe('DEADLINE_EXCEEDED');
    const m = await d.scrape();
    const count = (outcome: string) => m.value('dispatch_tool_calls_total', { tenant: 'default', tool: 'send', outcome });
    expect([count('CANCELLED'), count('DEADLINE_EXCEEDED'), count('BLOCKED')]).toEqual([3, undefined, 1]);
    expect(tools.count()).toBe(0);
  });
});

test("by dispatchd's shutdown: UNAVAILABLE SHUTTING_DOWN at the grace's end, though the approval timeout is a minute", async () => {
  const d = await startMetricsApp(yaml(60_000));
  const tap = await tapEvents(d.address);
  try {
    const started = Date.now();
    const pending = d.dispatch.dispatch({ sessionId: 'shutdown', interactive: true, calls: [send('s1')] }).then(() => undefined, (e: ServiceError) => e);
    await tap.waitFor((events) => ofSession(events, 'shutdown').some((e) => e.kind === EventKind.APPROVAL_REQUESTED));
    const draining = Date.now();
    void d.server.shutdown(600);
    const error = await pending;
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(errorReason(error)).toBe('SHUTTING_DOWN');
    expect(Date.now() - draining).toBeGreaterThanOrEqual(550);
    expect(Date.now() - started).toBeLessThan(5_000);
    // The server is down; the metrics endpoint (closed with the plugins) still answers.
    const m = await d.scrape();
    const count = (outcome: string) => m.value('dispatch_tool_calls_total', { tenant: 'default', tool: 'send', outcome });
    expect([count('SHUTTING_DOWN'), count('BLOCKED')]).toEqual([1, undefined]);
    expect(tools.count()).toBe(0);
  } finally {
    tap.close();
    await d.close();
  }
});
