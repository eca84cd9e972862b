import { status } from '@grpc/grpc-js';
import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { failure } from '../contract/error-info';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp } from '../helpers/servers';
import { errorJson, startGuardedApp, until } from './helpers';

// Refusals before the store step are recorded through the store: two replicas sharing one Redis
// see each other's, EndSession clears them; an approval denied again and again is stopped too.

jest.setTimeout(60_000);

const yaml = `
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]}'
    builtin: { name: echo }
  - name: deploy
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
policies:
  - match: charge
    when: [{ pointer: /amount, op: ">", value: 1000 }]
    decide: block
    reason: payments over 1000 need a human
  - match: deploy
    decide: ask
    reason: changes production
`;

const loopWarnings = (r: ToolResult) => r.warnings.filter((w) => w.startsWith('loop warning'));
const call = (id: string, name: string, args: string) => ({ id, name, arguments: args });

describe('two replicas sharing one Redis', () => {
  let redis: TestRedis;
  let a: Awaited<ReturnType<typeof startApp>>;
  let b: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    a = await startApp(yaml, { redisUrl: redis.url });
    b = await startApp(yaml, { redisUrl: redis.url });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.close();
  });

  const cases: [string, string, string, string][] = [
    ['a block rule', 'charge', '{"amount":5000}', 'BLOCKED'],
    ['a headless ask', 'deploy', '{"env":"prod"}', 'BLOCKED'],
    ['bad arguments', 'charge', '{"amount":"lots"}', 'INVALID_ARGUMENTS'],
    ['an unknown name', 'chrage', '{"amount":5000}', 'UNKNOWN_TOOL'],
  ];
  test.each(cases)('%s alternating between them: warned from the 2nd, ABORTED LOOP_DETECTED at the 10th; EndSession on either clears it', async (_what, name, args, kind) => {
    const sessionId = `shared-${name}-${kind}`;
    const results: ToolResult[] = [];
    for (let i = 1; i <= 9; i++) results.push((await (i % 2 === 1 ? a : b).dispatch.dispatch({ sessionId, calls: [call(`c${i}`, name, args)] })).results[0]!);
    expect(results.map((r) => errorJson(r.output).kind)).toEqual(Array(9).fill(kind));
    expect(results.map((r) => loopWarnings(r).length)).toEqual([0, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(loopWarnings(results[8]!)[0]).toContain('refused the same way 9 times in a row');
    const stop = await failure(b.dispatch.dispatch({ sessionId, calls: [call('c10', name, args)] }));
    expect(stop).toMatchObject({ code: status.ABORTED, reason: 'LOOP_DETECTED' });
    expect(stop.details).toContain(`was refused the same way 10 times in a row (${kind})`);
    expect(stop.metadata).toMatchObject({ tool_call_id: 'c10', session_id: sessionId });
    await a.dispatch.endSession({ sessionId });
    const after = await b.dispatch.dispatch({ sessionId, calls: [call('c11', name, args)] });
    expect(loopWarnings(after.results[0]!)).toEqual([]);
  });
});

describe('a denied approval', () => {
  let d: Awaited<ReturnType<typeof startGuardedApp>>;
  beforeAll(async () => {
    d = await startGuardedApp(yaml);
  });
  afterAll(async () => {
    await d?.close();
  });

  /** One interactive call of deploy, denied by its approver: its result, or the turn's failure. */
  async function deniedOnce(i: number): Promise<ToolResult | Error> {
    const asked = d.events.filter((e) => e.kind === 'APPROVAL_REQUESTED').length;
    const pending = d.dispatch.dispatch({ sessionId: 'deny', interactive: true, calls: [call(`d${i}`, 'deploy', '{"env":"prod"}')] });
    const settled = pending.then(
      (r) => r.results[0]!,
      (e: Error) => e,
    );
    // Every denial asks the approver again: a refusal streak arms no LOOP_BLOCKED.
    await until(() => d.events.filter((e) => e.kind === 'APPROVAL_REQUESTED').length > asked);
    const approvalId = d.events.filter((e) => e.kind === 'APPROVAL_REQUESTED')[asked]!.detail;
    expect((await d.dispatch.resolveApproval({ approvalId, approve: false, reason: 'not today' })).resolved).toBe(true);
    return settled;
  }

  test('the same call denied: warned from the 2nd, asked each time, ABORTED LOOP_DETECTED at the 10th', async () => {
    const results: (ToolResult | Error)[] = [];
    for (let i = 1; i <= 10; i++) results.push(await deniedOnce(i));
    const nine = results.slice(0, 9) as ToolResult[];
    expect(nine.map((r) => errorJson(r.output).message)).toEqual(Array(9).fill('approval was not granted: changes production; the approver said: not today'));
    expect(nine.map((r) => loopWarnings(r).length)).toEqual([0, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(results[9]).toMatchObject({ code: status.ABORTED, details: 'loop detected: the same call of deploy was refused the same way 10 times in a row (BLOCKED)' });
  });
});
