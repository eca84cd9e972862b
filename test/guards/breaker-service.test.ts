import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { breakerStatsOf } from '../../src/guards';
import { startToolServer, type ToolRoute, type ToolServer } from '../helpers/servers';
import { errorJson, startGuardedApp, until } from './helpers';

let mode: 'ok' | 'fail' | 'slow-ok' = 'ok';
const byArgs: ToolRoute = (req, res) => {
  const args = req.body.arguments as { fail?: boolean; status?: number };
  res.writeHead(args.fail ? (args.status ?? 500) : 200).end(args.fail ? 'upstream broke' : 'fine');
};
const byMode: ToolRoute = async (_req, res) => {
  if (mode === 'slow-ok') await new Promise((r) => setTimeout(r, 300));
  res.writeHead(mode === 'fail' ? 503 : 200).end(mode === 'fail' ? 'down' : 'fine');
};

const yaml = (url: string) => `
tools:
  - name: flaky
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/flaky" }
  - name: probe
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/probe" }
policies:
  - match: probe
    breaker: { consecutive_failures: 2, half_open_after_ms: 300 }
`;

describe('breakers through the gRPC service', () => {
  let tools: ToolServer;
  let d: Awaited<ReturnType<typeof startGuardedApp>>;
  const calls = (name: string, args: object[], from = 0) => args.map((a, i) => ({ id: `${name}${from + i}`, name, arguments: JSON.stringify({ n: from + i, ...a }) }));
  const kinds = (results: { output: string; isError: boolean }[]) => results.map((r) => (r.isError ? errorJson(r.output).kind : 'OK'));
  const stateEvents = (tool: string) => d.events.filter((e) => e.kind === 'BREAKER_STATE' && e.tool === tool).map((e) => e.detail);

  beforeEach(async () => {
    mode = 'ok';
    tools = await startToolServer({ '/flaky': byArgs, '/probe': byMode });
    d = await startGuardedApp(yaml(tools.url));
  });
  afterEach(async () => {
    await d.close();
    await tools.close();
  });

  test('the 5th consecutive failure opens the breaker; the next call is BREAKER_OPEN and never reaches the tool', async () => {
    const four = await d.dispatch.dispatch({ sessionId: 's', calls: calls('flaky', Array(4).fill({ fail: true })) });
    expect(kinds(four.results)).toEqual(['TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR']);
    expect(stateEvents('flaky')).toEqual([]);
    const more = await d.dispatch.dispatch({ sessionId: 's', calls: calls('flaky', [{ fail: true }, {}, {}], 4) });
    expect(kinds(more.results)).toEqual(['TOOL_ERROR', 'BREAKER_OPEN', 'BREAKER_OPEN']);
    expect(tools.count('/flaky')).toBe(5);
    const refused = more.results[1]!;
    expect(refused.error?.kind).toBe(ErrorKind.BREAKER_OPEN);
    expect(refused.error?.recoverable).toBe(true);
    expect(errorJson(refused.output).message).toBe('tool "flaky" is temporarily unavailable: its circuit breaker is open after repeated failures');
    expect(stateEvents('flaky')).toEqual(['open']);
    const stats = breakerStatsOf(d.app.deps.guards)!;
    expect(stats.state('flaky')).toBe('open');
    expect(stats.healthScore('flaky')).toBe(0);
    expect(stats.healthScore('probe')).toBe(1);
  });

  test('>= 50% failures over at least 10 calls opens it: closed at 7 calls with 4 failures, open at 10 with 5', async () => {
    const pattern = [true, false, true, false, true, false, true, false, false, true].map((fail) => ({ fail }));
    const ten = await d.dispatch.dispatch({ sessionId: 's', calls: calls('flaky', pattern) });
    expect(kinds(ten.results).filter((k) => k === 'BREAKER_OPEN')).toEqual([]);
    expect(tools.count('/flaky')).toBe(10);
    expect(stateEvents('flaky')).toEqual(['open']);
    const next = await d.dispatch.dispatch({ sessionId: 's', calls: calls('flaky', [{}], 10) });
    expect(kinds(next.results)).toEqual(['BREAKER_OPEN']);
    expect(tools.count('/flaky')).toBe(10);
  });

  test('4xx answers do not count against the breaker', async () => {
    const res = await d.dispatch.dispatch({ sessionId: 's', calls: calls('flaky', Array(12).fill({ fail: true, status: 404 })) });
    expect(kinds(res.results)).toEqual(Array(12).fill('TOOL_ERROR'));
    expect(tools.count('/flaky')).toBe(12);
    expect(breakerStatsOf(d.app.deps.guards)!.state('flaky')).toBe('closed');
  });

  test('half-open admits one probe; when it succeeds the breaker closes', async () => {
    mode = 'fail';
    await d.dispatch.dispatch({ sessionId: 's', calls: calls('probe', [{}, {}, {}]) });
    expect(tools.count('/probe')).toBe(2);
    await until(() => stateEvents('probe').includes('half_open'));
    mode = 'slow-ok';
    const probe = d.dispatch.dispatch({ sessionId: 'a', calls: calls('probe', [{}], 10) });
    await until(() => tools.count('/probe') === 3);
    const during = await d.dispatch.dispatch({ sessionId: 'b', calls: calls('probe', [{}], 20) });
    expect(kinds(during.results)).toEqual(['BREAKER_OPEN']);
    expect(kinds((await probe).results)).toEqual(['OK']);
    mode = 'ok';
    const after = await d.dispatch.dispatch({ sessionId: 'c', calls: calls('probe', [{}, {}], 30) });
    expect(kinds(after.results)).toEqual(['OK', 'OK']);
    expect(tools.count('/probe')).toBe(5);
    expect(stateEvents('probe')).toEqual(['open', 'half_open', 'closed']);
  });

  test('half-open admits one probe; when it fails the breaker opens again at once', async () => {
    mode = 'fail';
    await d.dispatch.dispatch({ sessionId: 's', calls: calls('probe', [{}, {}]) });
    await until(() => stateEvents('probe').includes('half_open'));
    const probe = await d.dispatch.dispatch({ sessionId: 's', calls: calls('probe', [{}, {}], 10) });
    expect(kinds(probe.results)).toEqual(['TOOL_ERROR', 'BREAKER_OPEN']);
    expect(tools.count('/probe')).toBe(3);
    expect(stateEvents('probe')).toEqual(['open', 'half_open', 'open']);
    await until(() => stateEvents('probe').length === 4);
    mode = 'ok';
    const later = await d.dispatch.dispatch({ sessionId: 's', calls: calls('probe', [{}], 20) });
    expect(kinds(later.results)).toEqual(['OK']);
    expect(stateEvents('probe')).toEqual(['open', 'half_open', 'open', 'half_open', 'closed']);
  });
});
