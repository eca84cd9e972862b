import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { errorJson, startGuardedApp } from './helpers';

// A call the model made to a read-only tool must not change anything: its `fallback_tool` is not
// taken when it is side-effecting, whether both tools come from the config file or the fallback is
// registered later by RPC (the start-up warning cannot see that one). A read-only fallback still
// runs. And the config file's likely mistakes are logged at start-up: such a pair, and a policy
// whose `match:` fits none of its tools. Real HTTP tools that count what reaches them.

let tools: ToolServer;
beforeEach(async () => {
  tools = await startToolServer({ '/search': json({ error: 'down' }, 0, 503), '/post': json({ posted: true }), '/mirror': json({ from: 'mirror' }) });
});
afterEach(async () => {
  await tools.close();
});

const httpTool = (name: string, effect: string, extra = '') => `
  - name: ${name}
    effect: ${effect}
    input_schema: '{"type":"object"}'
    retry: { max_attempts: 1 }
    http: { url: "${tools.url}/${name}" }${extra}`;

test('a read-only tool does not fall back to a side-effecting one: the call ends with its own error and a warning saying why', async () => {
  const d = await startGuardedApp(`
tools:${httpTool('search', 'read_only', '\n    fallback_tool: post')}${httpTool('post', 'side_effect')}
`);
  try {
    const result = (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'search', arguments: '{"q":"x"}' }] })).results[0]!;
    expect(result).toMatchObject({ isError: true, resolvedToolName: 'search', attempts: 1 });
    expect(errorJson(result.output).kind).toBe('TOOL_ERROR');
    expect(result.warnings).toEqual(['no fallback ran: "search" is read-only and its fallback_tool "post" is side-effecting; a read-only call never falls back to a tool that changes things']);
    expect(tools.count('/post')).toBe(0);
  } finally {
    await d.close();
  }
});

test('the same holds for a side-effecting fallback registered by RPC after start-up; a read-only one registered so is taken', async () => {
  const d = await startGuardedApp(`
tools:${httpTool('search', 'read_only', '\n    fallback_tool: post')}${httpTool('lookup', 'read_only', '\n    fallback_tool: mirror').replace('/lookup', '/search')}
`);
  const registered = (name: string, effect: Effect) => ({ name, effect, inputSchema: '{"type":"object"}', executor: { case: 'http' as const, value: { url: `${tools.url}/${name}`, headers: {} } } });
  try {
    await d.registry.registerTools({ tools: [registered('post', Effect.SIDE_EFFECT), registered('mirror', Effect.READ_ONLY)] });
    const [refused, taken] = (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'a', name: 'search', arguments: '{}' }, { id: 'b', name: 'lookup', arguments: '{}' }] })).results;
    expect(refused).toMatchObject({ isError: true, resolvedToolName: 'search' });
    expect(refused!.warnings[0]).toMatch(/^no fallback ran: "search" is read-only and its fallback_tool "post" is side-effecting/);
    expect(tools.count('/post')).toBe(0);
    expect(taken).toMatchObject({ isError: false, resolvedToolName: 'mirror', output: '{"from":"mirror"}' });
  } finally {
    await d.close();
  }
});

/** A logger that keeps the warnings. */
function warningsLogger(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const ignore = () => undefined;
  return { logger: { debug: ignore, info: ignore, error: ignore, warn: (message) => void warnings.push(message) }, warnings };
}

test('start-up warns of a policy whose match fits no tool of the config file (with a did-you-mean), and of a read-only tool with a side-effecting fallback', async () => {
  const { logger, warnings } = warningsLogger();
  const d = await startApp(
    `
tools:${httpTool('delete_db', 'side_effect')}${httpTool('search', 'read_only', '\n    fallback_tool: delete_db')}
policies:
  - { name: no-deletes, match: "delete-*", decide: block, reason: nope }
  - { match: serach, concurrency: { max_in_flight: 1 } }
  - { match: [nothing_like_it], budget: { max_calls_per_session: 3 } }
  - { match: "sea*", rate: { per_second: 5 } }
  - { match: "*", decide: allow, reason: ok }
  - { match: "other-*", after: { warn: "not checked: after entries annotate" } }
`,
    { logger },
  );
  try {
    expect(warnings).toEqual([
      'policies[0] (no-deletes): match "delete-*" fits no tool of the config file (did you mean "delete_*"?); the decide entry applies only to tools registered later (by a tenant or an MCP server) that it fits',
      'policies[1]: match "serach" fits no tool of the config file (did you mean "search"?); the concurrency entry applies only to tools registered later (by a tenant or an MCP server) that it fits',
      'policies[2]: match "nothing_like_it" fits no tool of the config file; the budget entry applies only to tools registered later (by a tenant or an MCP server) that it fits',
      'tool "search" is read-only and its fallback_tool "delete_db" is side-effecting: a read-only call never falls back to a tool that changes things, so this fallback is never taken (make "delete_db" read_only if it changes nothing, or name a read-only fallback)',
    ]);
  } finally {
    await d.close();
  }
});

test('a config file with no tools (all registered later) gets no match warnings', async () => {
  const { logger, warnings } = warningsLogger();
  const d = await startApp('tools: []\npolicies:\n  - { match: "delete-*", decide: block, reason: nope }\n', { logger });
  try {
    expect(warnings).toEqual([]);
  } finally {
    await d.close();
  }
});
