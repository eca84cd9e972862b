import { status, type ServiceError } from '@grpc/grpc-js';
import { callOutcomes, tapEvents, turnEnded, type EventTap } from '../events/event-tap';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { startMetricsApp, type MetricsApp } from '../telemetry/metrics-app';
import { sendToolYaml } from './helpers';

// A policy endpoint consult (policies `endpoint:`) cut short by the client's cancel or the RPC
// deadline is no refusal: the call ends as the RPC does (CANCELLED, DEADLINE_EXCEEDED), and its
// TOOL_POST, the TURN_END and dispatch_tool_calls_total say so. The aborted consult was taken for a
// failed endpoint: BLOCKED "the policy service could not be consulted" (fail closed), counted as a
// refusal. The full app over real gRPC, its events and real /metrics; the policy service is a real
// HTTP server that answers late, and the tool is never reached.

jest.setTimeout(20_000);

/** How late the policy endpoint answers: twice the 400 ms RPC deadline below. */
const POLICY_ANSWER_MS = 800;

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({
    '/send': json({ sent: true }),
    '/policy-slow': (_req, res) => void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"decision":"allow"}'), POLICY_ANSWER_MS),
  });
});
afterAll(() => tools.close());

const yaml = (failOpen: boolean) => `${sendToolYaml(tools.url)}
policies:
  - match: send
    endpoint: { url: "${tools.url}/policy-slow", timeout_ms: 5000, fail_open: ${failOpen} }
`;

const send = (id: string) => ({ id, name: 'send', arguments: JSON.stringify({ to: id }) });

describe.each([false, true])('a policy endpoint consult cut short (fail_open %s)', (failOpen) => {
  let d: MetricsApp;
  let tap: EventTap;
  beforeAll(async () => {
    d = await startMetricsApp(yaml(failOpen));
    tap = await tapEvents(d.address);
  });
  afterAll(async () => {
    tap?.close();
    await d?.close();
  });

  const consulted = () => tools.received.filter((r) => r.path === '/policy-slow').length;

  test("by the client's cancel: CANCELLED, not BLOCKED", async () => {
    const before = consulted();
    const controller = new AbortController();
    const pending = d.dispatch.dispatch({ sessionId: 'cancel', calls: [send('c1')] }, { signal: controller.signal }).then(() => undefined, (e: ServiceError) => e);
    while (consulted() === before) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    expect((await pending)?.code).toBe(status.CANCELLED);
    await tap.waitFor(turnEnded('cancel'));
    expect(callOutcomes(tap.events, 'cancel')).toEqual({ posts: [['c1', 'CANCELLED', 'CANCELLED']], turn: 'CANCELLED' });
  });

  test('by the RPC deadline: DEADLINE_EXCEEDED, and the metrics count neither as BLOCKED; the tool is never reached', async () => {
    const error = await d.dispatch.dispatch({ sessionId: 'deadline', calls: [send('d1')] }, { deadlineMs: 400 }).then(() => undefined, (e: ServiceError) => e);
    expect(error?.code).toBe(status.DEADLINE_EXCEEDED);
    await tap.waitFor(turnEnded('deadline'));
    expect(callOutcomes(tap.events, 'deadline')).toEqual({ posts: [['d1', 'DEADLINE_EXCEEDED', 'DEADLINE_EXCEEDED']], turn: 'DEADLINE_EXCEEDED' });
    const m = await d.scrape();
    const count = (outcome: string) => m.value('dispatch_tool_calls_total', { tenant: 'default', tool: 'send', outcome });
    expect([count('CANCELLED'), count('DEADLINE_EXCEEDED'), count('BLOCKED')]).toEqual([1, 1, undefined]);
    // The late answer (allow) reaches nobody: nothing ran.
    await new Promise((r) => setTimeout(r, POLICY_ANSWER_MS + 100));
    expect(tools.count('/send')).toBe(0);
  });
});
