import { status } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startToolServer, type ToolRoute, type ToolServer } from '../helpers/servers';
import { errorJson, errorReason, startGuardedApp } from './helpers';

const echoR: ToolRoute = (req, res) => void res.writeHead(200).end(String((req.body.arguments as { r?: unknown }).r ?? 'same'));

const yaml = (url: string) => `
tools:
  - name: lookup
    effect: read_only
    primary_parameter: /q
    input_schema: '{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"},"r":{"type":"string"}},"required":["q"]}'
    http: { url: "${url}/lookup" }
  - name: broken
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${url}/broken" }
  - name: sleep
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: sleep }
  - name: strict
    effect: read_only
    primary_parameter: /q
    loop: { warn_threshold: 2, stop_threshold: 3 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/lookup" }
`;

const loopWarnings = (warnings: readonly string[]) => warnings.filter((w) => w.startsWith('loop warning'));
const call = (id: string, args: object, name = 'lookup') => ({ id, name, arguments: JSON.stringify(args) });

describe('loop detection through the gRPC service', () => {
  let tools: ToolServer;
  let d: Awaited<ReturnType<typeof startGuardedApp>>;
  beforeEach(async () => {
    tools = await startToolServer({ '/lookup': echoR, '/broken': json({ error: 'bad query' }, 0, 400) });
    d = await startGuardedApp(yaml(tools.url));
  });
  afterEach(async () => {
    await d.close();
    await tools.close();
  });

  test('the warning rides on the 3rd identical result, not the 2nd; memoized results count', async () => {
    const first = await d.dispatch.dispatch({ sessionId: 's', calls: [call('a1', { q: 'x' }), call('a2', { q: 'x' })] });
    expect(first.results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 0]);
    expect(d.events.filter((e) => e.kind === 'LOOP_WARNING')).toHaveLength(0);
    const third = await d.dispatch.dispatch({ sessionId: 's', calls: [call('a3', { q: 'x' })] });
    const result = third.results[0]!;
    expect(result.toolCallId).toBe('a3');
    expect(result.cached).toBe(true);
    expect(loopWarnings(result.warnings)).toEqual(['loop warning: lookup returned the same result the last 3 times it was called with the same input; use the result you have or change the approach (at 10 such results, the next identical call ends the turn)']);
    expect(d.events.filter((e) => e.kind === 'LOOP_WARNING').map((e) => e.toolCallId)).toEqual(['a3']);
    expect(tools.count('/lookup')).toBe(1);
  });

  test('with 9 identical results the 10th call runs; with 10 the 11th ends the RPC ABORTED LOOP_DETECTED', async () => {
    const nine = await d.dispatch.dispatch({ sessionId: 's', calls: Array.from({ length: 9 }, (_, i) => call(`c${i + 1}`, { q: 'x', n: i })) });
    expect(nine.results.every((r) => !r.isError && r.output === 'same')).toBe(true);
    const tenth = await d.dispatch.dispatch({ sessionId: 's', calls: [call('c10', { q: 'x', n: 10 })] });
    expect(tenth.results[0]!.isError).toBe(false);
    expect(loopWarnings(tenth.results[0]!.warnings)[0]).toContain('the last 10 times');
    expect(tools.count('/lookup')).toBe(10);
    const eleventh = d.dispatch.dispatch({ sessionId: 's', calls: [call('c11', { q: 'x', n: 11 })] });
    await expect(eleventh).rejects.toMatchObject({ code: status.ABORTED, details: 'loop detected: lookup returned the same result the last 10 times it was called with the same input' });
    expect(errorReason(await eleventh.catch((e: unknown) => e))).toBe('LOOP_DETECTED');
    expect(tools.count('/lookup')).toBe(10);
    expect(d.events.filter((e) => e.kind === 'LOOP_STOP').map((e) => e.toolCallId)).toEqual(['c11']);
    const other = await d.dispatch.dispatch({ sessionId: 'other', calls: [call('o1', { q: 'x', n: 1 })] });
    expect(other.results[0]!.isError).toBe(false);
  });

  test('a different result for the same (tool, parameter) is progress and clears the count', async () => {
    const calls = (from: number, count: number, r: string) => Array.from({ length: count }, (_, i) => call(`p${from + i}`, { q: 'x', n: from + i, r }));
    await d.dispatch.dispatch({ sessionId: 's', calls: calls(0, 9, 'A') });
    const progress = await d.dispatch.dispatch({ sessionId: 's', calls: calls(9, 1, 'B') });
    expect(loopWarnings(progress.results[0]!.warnings)).toEqual([]);
    const again = await d.dispatch.dispatch({ sessionId: 's', calls: calls(10, 9, 'A') });
    expect(again.results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 0, 1, 1, 1, 1, 1, 1, 1]);
    await d.dispatch.dispatch({ sessionId: 's', calls: [call('p19', { q: 'y', n: 19, r: 'A' })] });
    const tenth = await d.dispatch.dispatch({ sessionId: 's', calls: calls(20, 1, 'A') });
    expect(tenth.results[0]!.isError).toBe(false);
    await expect(d.dispatch.dispatch({ sessionId: 's', calls: calls(21, 1, 'A') })).rejects.toMatchObject({ code: status.ABORTED });
    expect(tools.count('/lookup')).toBe(21);
  });

  test('identical failures: a warning at the 2nd, the 5th still runs, then LOOP_BLOCKED without executing', async () => {
    const res = await d.dispatch.dispatch({ sessionId: 's', calls: Array.from({ length: 6 }, (_, i) => call(`f${i + 1}`, { same: true }, 'broken')) });
    const kinds = res.results.map((r) => errorJson(r.output).kind);
    expect(kinds).toEqual(['TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'LOOP_BLOCKED']);
    expect(res.results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 1, 1, 1, 1, 0]);
    expect(loopWarnings(res.results[1]!.warnings)[0]).toBe('loop warning: this call has failed the same way 2 times in a row; change the arguments or the approach');
    expect(tools.count('/broken')).toBe(5);
    const blocked = res.results[5]!;
    expect(blocked.error?.kind).toBe(ErrorKind.LOOP_BLOCKED);
    // Refused for the default cool-down (30 s after the 5th failure), then let run once more.
    expect(errorJson(blocked.output).message).toBe('this exact call failed the same way 5 times in a row; dispatch refuses to run it again for 30 s, then runs it once more');
    expect(blocked.error?.retryAfterMs).toBeGreaterThan(29_000);
    expect(blocked.error?.retryAfterMs).toBeLessThanOrEqual(30_000);
    const changed = await d.dispatch.dispatch({ sessionId: 's', calls: [call('f7', { same: false }, 'broken')] });
    expect(errorJson(changed.results[0]!.output).kind).toBe('TOOL_ERROR');
    expect(tools.count('/broken')).toBe(6);
  });

  test('thresholds and the primary parameter are per tool', async () => {
    const res = await d.dispatch.dispatch({ sessionId: 's', calls: [call('t1', { q: 'k', n: 1 }, 'strict'), call('t2', { q: 'k', n: 2 }, 'strict'), call('t3', { q: 'k', n: 3 }, 'strict')] });
    expect(res.results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 1, 1]);
    await expect(d.dispatch.dispatch({ sessionId: 's', calls: [call('t4', { q: 'k', n: 4 }, 'strict')] })).rejects.toMatchObject({ code: status.ABORTED });
  });

  test('a cancelled attempt is no repeat: five calls cancelled by their client do not block the next', async () => {
    for (let i = 0; i < 5; i++) {
      const controller = new AbortController();
      const pending = d.dispatch.dispatch({ sessionId: 'c', calls: [call(`c${i}`, { ms: 300 }, 'sleep')] }, { signal: controller.signal }).catch((error: unknown) => error);
      await new Promise((r) => setTimeout(r, 100));
      controller.abort();
      expect(await pending).toMatchObject({ code: status.CANCELLED });
    }
    await new Promise((r) => setTimeout(r, 100));
    const res = await d.dispatch.dispatch({ sessionId: 'c', calls: [call('c9', { ms: 300 }, 'sleep')] });
    expect(res.results[0]!.isError).toBe(false);
    expect(loopWarnings(res.results[0]!.warnings)).toEqual([]);
  });
});
