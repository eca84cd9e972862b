import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { tapEvents, type EventTap } from '../events/event-tap';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, json, type TestDispatch, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// docs/policies.md: APPROVAL_REQUESTED "reaches whoever subscribes for the tenant by the time the
// call asks, also when nobody did when its turn began", and APPROVAL_RESOLVED follows it. The
// memory store's case is tested (test/guards/approval-listing.test.ts); this is the Redis one: the
// turn begins on replica A with no subscriber anywhere (a lean turn, no events built), an approver
// subscribes on replica B before the turn's second call asks, and B's stream gets both approval
// events (with the arguments and the decision) and nothing else of the turn.

jest.setTimeout(30_000);

let redis: TestRedis;
let tools: ToolServer;
const opened: TestDispatch[] = [];
let tap: EventTap | undefined;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/charge': json({ charged: true }), '/slow': json({ found: true }, 1500) });
});
afterAll(async () => {
  tap?.close();
  for (const d of opened) await d.close();
  await tools.close();
  await redis.close();
});

const yaml = () => `
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/charge" }
  - name: slow
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/slow" }
policies:
  - match: charge
    decide: ask
    reason: payments need an ok
limits: { approval_timeout_ms: 10000 }
`;

test('an approver subscribing on B after a lean turn began on A gets its APPROVAL_REQUESTED and APPROVAL_RESOLVED', async () => {
  const a = await startApp(yaml(), { redisUrl: redis.url });
  opened.push(a);
  const b = await startApp(yaml(), { redisUrl: redis.url });
  opened.push(b);
  const turn = a.dispatch.dispatch({ sessionId: 'lean', interactive: true, calls: [{ id: 'c0', name: 'slow', arguments: '{}' }, { id: 'c1', name: 'charge', arguments: '{"amount":5}' }] });
  await new Promise((r) => setTimeout(r, 300));
  tap = await tapEvents(b.address, {});
  await tap.waitFor((events) => events.some((e) => e.kind === EventKind.APPROVAL_REQUESTED));
  const asked = tap.events.find((e) => e.kind === EventKind.APPROVAL_REQUESTED)!;
  expect([asked.sessionId, asked.toolCallId, asked.tool, asked.attributes['dispatch.arguments'], asked.attributes['dispatch.reason']]).toEqual(['lean', 'c1', 'charge', '{"amount":5}', 'payments need an ok']);
  const approvalId = asked.attributes['dispatch.approval_id']!;
  expect((await b.dispatch.resolveApproval({ approvalId, approve: true, reason: 'fine' })).resolved).toBe(true);
  expect((await turn).results.map((r) => r.output)).toEqual(['{"found":true}', '{"charged":true}']);
  const seen = await until(() => (tap!.events.some((e) => e.kind === EventKind.APPROVAL_RESOLVED) ? tap!.events : undefined), 'APPROVAL_RESOLVED on B');
  const resolved = seen.find((e) => e.kind === EventKind.APPROVAL_RESOLVED)!;
  expect([resolved.spanId, resolved.attributes['dispatch.approval_id'], resolved.attributes['dispatch.approval.decision'], resolved.attributes['dispatch.reason']]).toEqual([asked.spanId, approvalId, 'approved', 'fine']);
  expect(seen.map((e) => EventKind[e.kind])).toEqual(['APPROVAL_REQUESTED', 'APPROVAL_RESOLVED']);
});
