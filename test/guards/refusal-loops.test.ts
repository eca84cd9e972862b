import { status } from '@grpc/grpc-js';
import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { failure } from '../contract/error-info';
import { errorJson, startGuardedApp } from './helpers';

// Calls dispatch refuses before their store step (a policy's block, a headless ask, their
// arguments, an unknown name) are loop-detected as a failing call is: a warning from the tool's
// failure_warn_threshold, ABORTED LOOP_DETECTED at its stop_threshold.

const yaml = `
tools:
  - name: charge
    effect: side_effect
    primary_parameter: /account
    input_schema: '{"type":"object","properties":{"account":{"type":"string"},"amount":{"type":"number"}},"required":["account","amount"]}'
    builtin: { name: echo }
  - name: deploy
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
  - name: tight
    effect: read_only
    primary_parameter: /k
    loop: { failure_warn_threshold: 3, stop_threshold: 4 }
    input_schema: '{"type":"object","properties":{"k":{"type":"integer"},"n":{"type":"integer"}}}'
    builtin: { name: echo }
policies:
  - match: charge
    when: [{ pointer: /amount, op: ">", value: 1000 }]
    decide: block
    reason: payments over 1000 need a human
  - match: deploy
    decide: ask
    reason: changes production
  - match: tight
    when: [{ pointer: /n, op: ">", value: 5 }]
    decide: block
    reason: too many
`;

const loopWarnings = (r: ToolResult) => r.warnings.filter((w) => w.startsWith('loop warning'));
const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) });
const big = { account: 'a', amount: 5000 };

describe('calls refused before they run are loop-detected', () => {
  let d: Awaited<ReturnType<typeof startGuardedApp>>;
  beforeEach(async () => {
    d = await startGuardedApp(yaml);
  });
  afterEach(async () => {
    await d.close();
  });

  /** Nine identical calls in one turn, then the 10th in the next: the warnings, then the stop's status. */
  async function tenTimes(sessionId: string, name: string, args: unknown) {
    const nine = await d.dispatch.dispatch({ sessionId, calls: Array.from({ length: 9 }, (_, i) => call(`c${i + 1}`, name, args)) });
    const stop = await failure(d.dispatch.dispatch({ sessionId, calls: [call('c10', name, args)] }));
    return { results: nine.results, stop };
  }

  test('a block rule: the 2nd carries the warning, the 10th ends the RPC ABORTED LOOP_DETECTED, named in its metadata', async () => {
    const { results, stop } = await tenTimes('blocked', 'charge', big);
    expect(results.map((r) => errorJson(r.output).kind)).toEqual(Array(9).fill('BLOCKED'));
    expect(results.map((r) => loopWarnings(r).length)).toEqual([0, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(loopWarnings(results[1]!)).toEqual(['loop warning: this call was refused the same way 2 times in a row; at 10 dispatch ends the turn (LOOP_DETECTED), so change the arguments or the approach']);
    // Past failure_block_threshold (5) nothing is refused LOOP_BLOCKED: the policy refuses first.
    expect(errorJson(results[8]!.output).message).toBe('blocked by policy: payments over 1000 need a human');
    expect(stop).toMatchObject({ code: status.ABORTED, reason: 'LOOP_DETECTED', details: 'loop detected: the same call of charge was refused the same way 10 times in a row (BLOCKED)' });
    expect(stop.metadata).toMatchObject({ tool: 'charge', tool_call_id: 'c10', session_id: 'blocked' });
    expect(d.events.filter((e) => e.kind === 'LOOP_WARNING').map((e) => e.toolCallId)).toEqual(['c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9']);
    expect(d.events.filter((e) => e.kind === 'LOOP_STOP').map((e) => e.toolCallId)).toEqual(['c10']);
    // Another session is not stopped.
    const other = await d.dispatch.dispatch({ sessionId: 'other', calls: [call('o1', 'charge', big)] });
    expect(loopWarnings(other.results[0]!)).toEqual([]);
  });

  test('one call per turn counts the same; EndSession clears the window', async () => {
    for (let i = 1; i <= 9; i++) await d.dispatch.dispatch({ sessionId: 'turns', calls: [call(`t${i}`, 'charge', big)] });
    expect(await failure(d.dispatch.dispatch({ sessionId: 'turns', calls: [call('t10', 'charge', big)] }))).toMatchObject({ code: status.ABORTED, reason: 'LOOP_DETECTED' });
    await d.dispatch.endSession({ sessionId: 'turns' });
    const after = await d.dispatch.dispatch({ sessionId: 'turns', calls: [call('t11', 'charge', big)] });
    expect(loopWarnings(after.results[0]!)).toEqual([]);
  });

  test('a headless ask', async () => {
    const { results, stop } = await tenTimes('ask', 'deploy', { env: 'prod' });
    expect(errorJson(results[0]!.output).message).toBe('needs approval, and this dispatch is headless: changes production');
    expect(results.map((r) => loopWarnings(r).length)).toEqual([0, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(stop).toMatchObject({ code: status.ABORTED, reason: 'LOOP_DETECTED', details: 'loop detected: the same call of deploy was refused the same way 10 times in a row (BLOCKED)' });
  });

  test('INVALID_ARGUMENTS: the same arguments in any key order, the tool never run', async () => {
    const nine = await d.dispatch.dispatch({ sessionId: 'invalid', calls: Array.from({ length: 9 }, (_, i) => call(`i${i + 1}`, 'charge', i % 2 === 0 ? '{"account":"a","amount":"lots"}' : '{"amount":"lots","account":"a"}')) });
    expect(nine.results.map((r) => errorJson(r.output).kind)).toEqual(Array(9).fill('INVALID_ARGUMENTS'));
    expect(nine.results.map((r) => loopWarnings(r).length)).toEqual([0, 1, 1, 1, 1, 1, 1, 1, 1]);
    const stop = await failure(d.dispatch.dispatch({ sessionId: 'invalid', calls: [call('i10', 'charge', '{"account":"a","amount":"lots"}')] }));
    expect(stop).toMatchObject({ code: status.ABORTED, reason: 'LOOP_DETECTED', details: 'loop detected: the same call of charge was refused the same way 10 times in a row (INVALID_ARGUMENTS)' });
    expect(stop.metadata).toMatchObject({ tool: 'charge', tool_call_id: 'i10', attempts: '0' });
    expect(d.events.filter((e) => e.kind === 'LOOP_STOP').map((e) => e.toolCallId)).toEqual(['i10']);
  });

  test('INVALID_ARGUMENTS of text that is no JSON', async () => {
    const { results, stop } = await tenTimes('notjson', 'charge', '{"account": a}');
    expect(results.map((r) => loopWarnings(r).length)).toEqual([0, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(stop).toMatchObject({ code: status.ABORTED, reason: 'LOOP_DETECTED' });
  });

  test('UNKNOWN_TOOL, keyed by the name asked for and its arguments, with the default thresholds', async () => {
    const { results, stop } = await tenTimes('unknown', 'chrage', big);
    expect(results.map((r) => errorJson(r.output).kind)).toEqual(Array(9).fill('UNKNOWN_TOOL'));
    expect(results.map((r) => loopWarnings(r).length)).toEqual([0, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(stop).toMatchObject({ code: status.ABORTED, reason: 'LOOP_DETECTED', details: 'loop detected: the same call of "chrage" was refused the same way 10 times in a row (UNKNOWN_TOOL)' });
    expect(stop.metadata).toMatchObject({ tool: 'chrage', tool_call_id: 'c10', session_id: 'unknown' });
  });

  test('differing arguments never warn nor abort', async () => {
    const calls = Array.from({ length: 12 }, (_, i) => [call(`b${i}`, 'charge', { account: `a${i}`, amount: 5000 }), call(`u${i}`, 'chrage', { n: i }), call(`v${i}`, 'charge', `{"account":"a${i}","amount":"x"}`)]).flat();
    const res = await d.dispatch.dispatch({ sessionId: 'differ', calls });
    expect(res.results).toHaveLength(36);
    expect(res.results.every((r) => r.isError && loopWarnings(r).length === 0)).toBe(true);
    expect(d.events.filter((e) => e.kind === 'LOOP_WARNING')).toEqual([]);
  });

  test('a success of the op resets the streak, and refusals before it do not block it (no LOOP_BLOCKED)', async () => {
    const six = await d.dispatch.dispatch({ sessionId: 'reset', calls: Array.from({ length: 6 }, (_, i) => call(`r${i}`, 'charge', big)) });
    expect(six.results.map((r) => loopWarnings(r).length)).toEqual([0, 1, 1, 1, 1, 1]);
    // Same op (primary parameter /account), let through: it runs, though six refusals came before it.
    const ok = await d.dispatch.dispatch({ sessionId: 'reset', calls: [call('ok', 'charge', { account: 'a', amount: 10 })] });
    expect(ok.results[0]!.isError).toBe(false);
    expect(loopWarnings(ok.results[0]!)).toEqual([]);
    const again = await d.dispatch.dispatch({ sessionId: 'reset', calls: Array.from({ length: 9 }, (_, i) => call(`s${i}`, 'charge', big)) });
    expect(again.results.map((r) => loopWarnings(r).length)).toEqual([0, 1, 1, 1, 1, 1, 1, 1, 1]);
  });

  test('a different refusal of the same op resets it too; thresholds are the tool\'s loop:', async () => {
    // The same op (primary parameter /k): refused by the policy, then by its arguments, then by the policy again.
    const nine = { k: 1, n: 9 };
    const res = await d.dispatch.dispatch({ sessionId: 'tight', calls: [call('a', 'tight', nine), call('b', 'tight', nine), call('c', 'tight', nine), call('d', 'tight', '{"k":1,"n":"x"}'), call('e', 'tight', nine), call('f', 'tight', nine), call('g', 'tight', nine)] });
    expect(res.results.map((r) => loopWarnings(r).length)).toEqual([0, 0, 1, 0, 0, 0, 1]);
    expect(await failure(d.dispatch.dispatch({ sessionId: 'tight', calls: [call('h', 'tight', nine)] }))).toMatchObject({ code: status.ABORTED, reason: 'LOOP_DETECTED', details: 'loop detected: the same call of tight was refused the same way 4 times in a row (BLOCKED)' });
  });
});
