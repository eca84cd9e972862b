import { status, type ServiceError } from '@grpc/grpc-js';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { callOutcomes, describe as shapes, ofSession, tapEvents, turnEnded, type EventTap } from '../events/event-tap';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, json, type TestDispatch, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// docs/policies.md ("Session budgets") reads the tool's loop block before an approver is asked,
// so that "no approver is asked about a call that would not run" (budget-reserve.ts). The loop
// pre-check's stop was not read there: a read the loop detector would stop (its same result
// `stop_threshold` times in a row) was put to the approver, who approved it and was answered
// resolved=true, and only then did the turn end ABORTED LOOP_DETECTED with nothing run. Now it
// ends so unasked: no APPROVAL_REQUESTED, nothing in ListApprovals, LOOP_STOP and TOOL_POST as
// the store step's stop gives them. Both stores, the full app over real gRPC, a real HTTP tool.

jest.setTimeout(30_000);

let redis: TestRedis;
let tools: ToolServer;
const opened: TestDispatch[] = [];
const taps: EventTap[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/look': json({ same: true }) });
});
afterAll(async () => {
  for (const t of taps) t.close();
  for (const d of opened) await d.close();
  await tools.close();
  await redis.close();
});

const yaml = () => `
tools:
  - name: look
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/look" }
    loop: { warn_threshold: 1, stop_threshold: 2 }
policies:
  - match: look
    decide: ask
    reason: reads need an ok
limits: { approval_timeout_ms: 5000 }
`;

test.each([
  ['the memory store', false],
  ['Redis', true],
])('with %s, a call the loop detector stops ends LOOP_DETECTED before its approver is asked', async (_store, shared) => {
  const d = await startApp(yaml(), shared ? { redisUrl: redis.url } : {});
  opened.push(d);
  const tap = await tapEvents(d.address);
  taps.push(tap);
  const session = `loop-${shared}`;
  const look = (id: string) => d.dispatch.dispatch({ sessionId: session, interactive: true, calls: [{ id, name: 'look', arguments: '{"q":1}' }] });
  for (const id of ['l1', 'l2']) {
    const pending = look(id);
    const wait = await until(async () => (await d.dispatch.listApprovals({ sessionId: session })).approvals[0], `${id} asked about`);
    expect((await d.dispatch.resolveApproval({ approvalId: wait.approvalId, approve: true })).resolved).toBe(true);
    expect((await pending).results[0]!.output).toBe('{"same":true}');
  }
  const ran = tools.count('/look');
  const error = await look('l3').then(() => undefined, (e: ServiceError) => e);
  expect([error?.code, error?.details]).toEqual([status.ABORTED, 'loop detected: look returned the same result the last 2 times it was called with the same input']);
  expect((await d.dispatch.listApprovals({ sessionId: session })).approvals).toEqual([]);
  expect(tools.count('/look')).toBe(ran);
  await tap.waitFor(turnEnded(session, 3));
  const third = ofSession(tap.events, session).filter((e) => e.toolCallId === 'l3');
  expect(third.some((e) => e.kind === EventKind.APPROVAL_REQUESTED)).toBe(false);
  expect(shapes(third)).toEqual(['CALL_RECEIVED:l3', 'TOOL_PRE:l3#1', 'LOOP_STOP:l3#1', 'TOOL_POST:l3#1']);
  expect(callOutcomes(tap.events, session).posts.at(-1)).toEqual(['l3', 'LOOP_DETECTED', 'LOOP_DETECTED']);
});
