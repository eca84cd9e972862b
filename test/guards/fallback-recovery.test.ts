import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startToolServer, type ToolRoute, type ToolServer } from '../helpers/servers';
import { errorJson, startGuardedApp } from './helpers';

// A fallback tool (`fallback_tool`) is held to what the call's own tool is held to: the session
// budget of its tools, the tools offered in the turn, and its own retry policy; and a call never
// falls back to a tool it already tried, so a cycle of fallbacks ends as a soft error instead of
// ending the whole turn. Through the real gRPC service and real HTTP tools that count what
// reaches them.

/** Answers 500 the first `failures` times it is called, then `{"from": path}`. */
const failing = (failures: number): ToolRoute => {
  let calls = 0;
  return (req, res) => void (calls++ < failures ? res.writeHead(500).end('overloaded') : res.writeHead(200).end(JSON.stringify({ from: req.path })));
};

const tool = (name: string, url: string, extra = '', attempts = 2) => `
  - name: ${name}
    effect: read_only
    input_schema: '{"type":"object"}'
    retry: { max_attempts: ${attempts}, initial_backoff_ms: 1, max_backoff_ms: 1 }
    http: { url: "${url}/${name}" }${extra}`;

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startGuardedApp>> | undefined;
afterEach(async () => {
  await d?.close();
  d = undefined;
  await tools.close();
});

let n = 0;
const one = (sessionId: string, name: string, offeredTools: string[] = []) =>
  d!.dispatch.dispatch({ sessionId, offeredTools, calls: [{ id: `c${++n}`, name, arguments: `{"n":${n}}` }] }).then((r) => r.results[0]!);

describe('a fallback and session budgets', () => {
  beforeEach(async () => {
    tools = await startToolServer({ '/search_free': json({ error: 'down' }, 0, 500), '/search_paid': json({ from: 'paid' }), '/search_other': json({ error: 'down' }, 0, 500) });
  });
  const yaml = () => `
tools:${tool('search_free', tools.url, '\n    fallback_tool: search_paid', 1)}${tool('search_paid', tools.url)}${tool('search_other', tools.url, '\n    fallback_tool: search_paid', 1)}
policies:
  - match: search_paid
    budget: { max_calls_per_session: 1 }
  - match: search_free
    budget: { max_calls_per_session: 100 }
`;

  test('a call that falls back to a tool under another budget counts against it, and past it is refused BLOCKED like a direct call', async () => {
    d = await startGuardedApp(yaml());
    const first = await one('s', 'search_free');
    expect([first.isError, first.output, first.resolvedToolName, first.attempts]).toEqual([false, '{"from":"paid"}', 'search_paid', 2]);
    expect(first.warnings).toEqual([
      'fell back from "search_free" to "search_paid": "search_free" failed with TOOL_ERROR',
      'this was the last call of this session\'s budget of 1 call of "search_paid" (policies budget:)',
    ]);
    const direct = await one('s', 'search_paid');
    const fallback = await one('s', 'search_free');
    for (const refused of [direct, fallback]) {
      expect(refused).toMatchObject({ isError: true, resolvedToolName: 'search_paid' });
      expect(refused.error).toMatchObject({ kind: ErrorKind.BLOCKED, recoverable: false, message: 'this session has used its budget of 1 call of "search_paid" (policies budget:); this call was not executed', suggestion: 'Do without this tool for the rest of this session.' });
    }
    expect(fallback.attempts).toBe(2);
    expect(fallback.warnings).toEqual(['fell back from "search_free" to "search_paid": "search_free" failed with TOOL_ERROR']);
    expect(tools.count('/search_paid')).toBe(1);
    expect(tools.count('/search_free')).toBe(2);
    // Another session has its whole budget.
    expect(await one('t', 'search_free')).toMatchObject({ isError: false, resolvedToolName: 'search_paid' });
  });

  test('a call whose tool shares its fallback\'s budget counts once; one under another budget is refused past the fallback\'s', async () => {
    d = await startGuardedApp(`
tools:${tool('search_free', tools.url, '\n    fallback_tool: search_paid', 1)}${tool('search_paid', tools.url)}${tool('search_other', tools.url, '\n    fallback_tool: search_paid', 1)}
policies:
  - match: ["search_free", "search_paid"]
    budget: { max_calls_per_session: 2 }
  - match: search_other
    budget: { max_calls_per_session: 1000 }
`);
    // search_free and its fallback share a budget: each call counts once.
    const shared = [await one('s', 'search_free'), await one('s', 'search_free')];
    expect(shared.map((r) => [r.isError, r.resolvedToolName, r.warnings])).toEqual([
      [false, 'search_paid', ['this session has 1 call left of its budget of 2 calls of tools matching search_free,search_paid (policies budget:)', 'fell back from "search_free" to "search_paid": "search_free" failed with TOOL_ERROR']],
      [false, 'search_paid', ['this was the last call of this session\'s budget of 2 calls of tools matching search_free,search_paid (policies budget:)', 'fell back from "search_free" to "search_paid": "search_free" failed with TOOL_ERROR']],
    ]);
    // search_other is under its own budget; its fallback is past the shared one.
    const other = await one('s', 'search_other');
    expect(other).toMatchObject({ isError: true, resolvedToolName: 'search_paid', attempts: 2 });
    expect(errorJson(other.output)).toMatchObject({ kind: 'BLOCKED', message: 'this session has used its budget of 2 calls of tools matching search_free,search_paid (policies budget:); this call was not executed' });
    expect(tools.count('/search_paid')).toBe(2);
  });

  test('a fallback that was not offered in the turn does not run: the original soft error, with a warning saying why', async () => {
    d = await startGuardedApp(yaml());
    const results = [await one('s', 'search_free', ['search_free']), await one('s', 'search_free', ['search_free'])];
    for (const result of results) {
      expect(result).toMatchObject({ isError: true, resolvedToolName: 'search_free', attempts: 1 });
      expect(result.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, recoverable: true });
      expect(errorJson(result.output)).toMatchObject({ kind: 'TOOL_ERROR', attempts: 1 });
      expect(result.warnings).toEqual(['no fallback ran: the fallback_tool of "search_free" was not offered to you in this turn']);
    }
    expect(tools.count('/search_paid')).toBe(0);
    expect(tools.count('/search_free')).toBe(2);
    // No retry was announced for the fallback that did not run.
    expect(d.events.filter((e) => e.kind === 'RETRY')).toEqual([]);
    // Offered, it runs (the budget was not spent by the refused ones).
    expect(await one('s', 'search_free', ['search_free', 'search_paid'])).toMatchObject({ isError: false, output: '{"from":"paid"}' });
  });
});

describe('a fallback and recovery', () => {
  beforeEach(async () => {
    tools = await startToolServer({ '/a': json({ error: 'down' }, 0, 500), '/b': json({ error: 'down' }, 0, 500), '/ok': json({ ok: true }), '/c': json({ error: 'down' }, 0, 500), '/d': failing(1), '/x': json({ error: 'down' }, 0, 500), '/y': json({ error: 'down' }, 0, 500), '/z': json({ error: 'down' }, 0, 500) });
  });
  const yaml = () => `
tools:${tool('a', tools.url, '\n    fallback_tool: b')}${tool('b', tools.url, '\n    fallback_tool: a')}${tool('ok', tools.url)}${tool('c', tools.url, '\n    fallback_tool: d')}${tool('d', tools.url)}${tool('x', tools.url, '\n    fallback_tool: y')}${tool('y', tools.url, '\n    fallback_tool: z')}${tool('z', tools.url)}
`;

  test('a cycle of fallbacks (a -> b -> a) ends as the last soft error, and the sibling call in the turn keeps its result', async () => {
    d = await startGuardedApp(yaml());
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c0', name: 'ok', arguments: '{}' }, { id: 'c1', name: 'a', arguments: '{}' }] });
    expect(results.map((r) => [r.toolCallId, r.isError, r.resolvedToolName, r.attempts])).toEqual([
      ['c0', false, 'ok', 1],
      ['c1', true, 'b', 4],
    ]);
    expect(results[0]!.output).toBe('{"ok":true}');
    expect(errorJson(results[1]!.output)).toMatchObject({ kind: 'TOOL_ERROR', attempts: 4 });
    expect(results[1]!.warnings).toContain('fell back from "a" to "b": "a" failed with TOOL_ERROR');
    // Each tool ran its own two attempts; a was not tried again.
    expect(tools.count('/a')).toBe(2);
    expect(tools.count('/b')).toBe(2);
  });

  test('a fallback gets the retries of its own retry policy', async () => {
    d = await startGuardedApp(yaml());
    const result = await one('s', 'c');
    // c, c again, then d, whose 500 is retried as d's max_attempts allows.
    expect([result.isError, result.output, result.resolvedToolName, result.attempts]).toEqual([false, '{"from":"/d"}', 'd', 4]);
    expect(tools.count('/c')).toBe(2);
    expect(tools.count('/d')).toBe(2);
  });

  test('a chain of fallbacks that runs out of attempts on their own retries ends soft at five attempts, not ABORTED', async () => {
    d = await startGuardedApp(yaml());
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c0', name: 'ok', arguments: '{}' }, { id: 'c1', name: 'x', arguments: '{}' }] });
    expect(results.map((r) => [r.toolCallId, r.isError, r.resolvedToolName, r.attempts])).toEqual([
      ['c0', false, 'ok', 1],
      ['c1', true, 'z', 5],
    ]);
    expect(errorJson(results[1]!.output)).toMatchObject({ kind: 'TOOL_ERROR', attempts: 5 });
    expect([tools.count('/x'), tools.count('/y'), tools.count('/z')]).toEqual([2, 2, 1]);
  });
});
