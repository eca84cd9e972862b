// Names an object inherits (`__proto__`, `constructor`, `toString`, ...) as tool names, argument
// keys, session ids, call ids, idempotency key fields, resource keys and Subscribe filters behave
// as an ordinary name (`weather`) does, through the real server on port 0, on the memory store and
// on Redis: each name's transcript of the main RPCs, with the name written as NAME, is weather's.
// Two such names looked up in plain object tables broke the Redis URL and the config file.
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

jest.setTimeout(30_000);

const ORDINARY = 'weather';
const NAMES = [ORDINARY, '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', '__defineGetter__'];

let tools: ToolServer;
let redis: TestRedis;
beforeAll(async () => {
  tools = await startToolServer({
    '/echo': (req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ got: req.body.arguments, pad: 'x'.repeat(600) })),
  });
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  await tools.close();
  await redis.close();
});

/**
 * For each name: a read-only tool of that name (its argument, parameter and resource key named so
 * too: required, as a schema naming a property `__proto__` is refused) and a side-effecting one keyed on it.
 */
const config = (url: string) =>
  'tools:\n' +
  NAMES.map(
    (n) => `  - { name: "${n}", effect: read_only, concurrency_safe: true, max_result_chars: 300, primary_parameter: "/${n}", resource_key: "/${n}", http: { url: "${url}/echo" }, input_schema: '{"type":"object","required":["${n}"]}' }
  - { name: "se_${n}", effect: side_effect, idempotency: { key_fields: ["/${n}"] }, http: { url: "${url}/echo" }, input_schema: '{"type":"object"}' }
`,
  ).join('');

type App = Awaited<ReturnType<typeof startApp>>;

/** What the main RPCs answer for `name`, every occurrence of it written as NAME. */
async function transcript(d: App, name: string): Promise<string[]> {
  const lines: string[] = [];
  const note = (what: string, value: unknown) => lines.push(`${what}: ${JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))}`.split(name).join('NAME'));
  const attempt = async (what: string, call: () => Promise<unknown>) => note(what, await call().catch((error: Error) => `error ${error.message}`));
  const session = name;
  const args = (value: string, extra = {}) => JSON.stringify({ [name]: value, ...extra });
  const turn = async (calls: { id: string; name: string; arguments: string }[], mode = 0) => (await d.dispatch.dispatch({ sessionId: session, mode, calls })).results;
  const brief = (r: Awaited<ReturnType<typeof turn>>[number]) => [r.toolCallId, r.isError, r.output.split(name).join('NAME').slice(0, 40), r.truncated, r.resultHandle !== '', r.idempotentReplay, r.cached];

  const events: Event[] = [];
  const stream = d.dispatch.subscribe({ sessionId: session, tools: [name] });
  stream.on('data', (e: Event) => events.push(e));
  stream.on('error', () => undefined);
  await new Promise((r) => setTimeout(r, 100));

  const [first] = await turn([{ id: name, name, arguments: args('a') }]);
  note('read-only', brief(first!));
  await attempt('ReadResult', async () => (await d.dispatch.readResult({ resultHandle: first!.resultHandle, limit: 30 + name.length })).text);
  note('memoized', (await turn([{ id: name, name, arguments: args('a') }])).map(brief));
  note('side effect', (await turn([{ id: name, name: `se_${name}`, arguments: args('k', { n: 1 }) }])).map(brief));
  note('replayed on the key field', (await turn([{ id: name, name: `se_${name}`, arguments: args('k', { n: 2 }) }])).map(brief));
  note('another key', (await turn([{ id: name, name: `se_${name}`, arguments: args('other') }])).map(brief));
  note('one resource, two waves', (await turn([{ id: `${name}1`, name, arguments: args('r') }, { id: `${name}2`, name, arguments: args('r') }], 2)).map(brief));
  note('missing argument', (await turn([{ id: name, name, arguments: '{}' }])).map((r) => r.error?.message));
  note('unknown tool', (await turn([{ id: name, name: `${name}x`, arguments: '{}' }])).map((r) => r.error?.message));
  await attempt('ParseToolCalls', async () => (await d.dispatch.parseToolCalls({ text: `<tool_call>{"name": "${name}", "arguments": ${args('p')}}</tool_call>`, offeredTools: [name] })).calls.map((c) => [c.name, c.arguments]));
  await attempt('GetToolStats', async () => (await d.registry.getToolStats({ tool: name })).stats.map((s) => [s.tool, s.calls, s.breakerState]));
  // Its property is not named so: Ajv leaves a property named __proto__ unchecked (see the audit's report).
  const spec = { name: `r_${name}`, inputSchema: '{"type":"object","properties":{"v":{"type":"integer"}},"required":["v"]}', effect: Effect.READ_ONLY, executor: { case: 'builtin' as const, value: { name: 'echo' } } };
  await attempt('RegisterTools', async () => (await d.registry.registerTools({ tools: [spec] })).registered);
  await attempt('RegisterTools again', async () => (await d.registry.registerTools({ tools: [spec] })).registered);
  note('registered tool', (await turn([{ id: name, name: `r_${name}`, arguments: `{"v": "7", "${name}": 1}` }])).map((r) => r.error?.message ?? r.output));
  await attempt('ListTools', async () => (await d.registry.listTools({})).tools.map((t) => t.name.split(name).join('NAME')).filter((t) => t.includes('NAME')).sort());
  await attempt('RemoveTool', async () => (await d.registry.removeTool({ name: `r_${name}` })).removed);
  await attempt('RemoveTool again', async () => (await d.registry.removeTool({ name: `r_${name}` })).removed);
  // The transcripts run at once, and a replica runs at most 2 ListApprovals of a tenant at a time
  // (RESOURCE_EXHAUSTED "try again shortly"): tried again, as a client does (at most 50 times).
  const listApprovals = async (tries = 50): Promise<number> => {
    try {
      return (await d.dispatch.listApprovals({ sessionId: session, tool: name })).approvals.length;
    } catch (error) {
      if (tries <= 1 || !/RESOURCE_EXHAUSTED/.test((error as Error).message)) throw error;
      await new Promise((r) => setTimeout(r, 20));
      return listApprovals(tries - 1);
    }
  };
  await attempt('ListApprovals', listApprovals);
  await attempt('ResolveApproval', async () => (await d.dispatch.resolveApproval({ approvalId: name, approve: true })).resolved);
  await attempt('EndSession', async () => (await d.dispatch.endSession({ sessionId: session })).$typeName);
  note('side effect after EndSession', (await turn([{ id: name, name: `se_${name}`, arguments: args('k', { n: 3 }) }])).map(brief));
  await new Promise((r) => setTimeout(r, 100));
  stream.cancel();
  note('events', [...new Set(events.filter((e) => e.kind !== EventKind.TURN_END).map((e) => `${EventKind[e.kind]} ${e.tool}`))].sort());
  return lines;
}

test.each(['memory', 'redis'])('on the %s store, every name is answered as weather is', async (store) => {
  const d = await startApp(config(tools.url), store === 'redis' ? { redisUrl: redis.url } : {});
  try {
    const all = await Promise.all(NAMES.map((name) => transcript(d, name)));
    const ordinary = all[0]!;
    // What weather's transcript says (so that matching it means something): a bounded result read
    // back, a memoized one, a replay on the key field only, one cleared by EndSession, the events.
    const said = new Map(ordinary.map((line) => [line.slice(0, line.indexOf(': ')), JSON.parse(line.slice(line.indexOf(': ') + 2)) as unknown]));
    expect(said.get('read-only')).toEqual(['NAME', false, expect.any(String), true, true, false, false]);
    expect(said.get('memoized')).toEqual([['NAME', false, expect.any(String), true, true, false, true]]);
    expect(said.get('replayed on the key field')).toEqual([['NAME', false, expect.stringContaining('"n":1'), false, false, true, false]]);
    expect(said.get('another key')).toEqual([['NAME', false, expect.any(String), false, false, false, false]]);
    expect(said.get('side effect after EndSession')).toEqual([['NAME', false, expect.stringContaining('"n":3'), false, false, false, false]]);
    // CALL_REFUSED: the transcript's calls refused before an attempt (test/events/call-refused.test.ts).
    expect(said.get('events')).toEqual(['CALL_RECEIVED NAME', 'CALL_REFUSED NAME', 'TOOL_POST NAME', 'TOOL_PRE NAME']);
    for (const [i, lines] of all.entries()) expect({ name: NAMES[i], lines }).toEqual({ name: NAMES[i], lines: ordinary });
  } finally {
    await d.close();
  }
});
