import { status } from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// Found in a contract audit: every read-only tool's result was memoized for 60 s with no way to
// turn it off (memoize_ttl_seconds: 0 means the default), so a polling tool whose answer changes
// on every call reached its tool once, answered "step 1" from the cache ten times, and the 11th
// poll ended the turn ABORTED LOOP_DETECTED. A tool declared `skip_memoize` reaches its tool on
// every call; loop detection still counts the results it really returns.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
let step = 0;

beforeAll(async () => {
  tools = await startToolServer({
    '/status': (_req, res) => void res.writeHead(200).end(JSON.stringify({ status: `step ${++step}` })),
    '/same': (_req, res) => void res.writeHead(200).end('{"status":"running"}'),
  });
  d = await startApp(`
tools:
  - { name: job_status, effect: read_only, skip_memoize: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/status" } }
  - { name: memo_status, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/status" } }
  - { name: stuck_status, effect: read_only, skip_memoize: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/same" } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const poll = (name: string, session: string, id: string) =>
  d.dispatch.dispatch({ sessionId: session, calls: [{ id, name, arguments: '{"job":"j1"}' }] }, { deadlineMs: 5_000 }).then((r) => r.results[0]!);

test('a skip_memoize tool reaches its tool on every poll: eleven changing answers, none cached, no loop', async () => {
  const before = tools.count('/status');
  const outputs: string[] = [];
  for (let i = 1; i <= 11; i++) {
    const result = await poll('job_status', 'poll-skip', `p${i}`);
    expect(result.cached).toBe(false);
    expect(result.isError).toBe(false);
    expect(result.warnings).toEqual([]);
    outputs.push(result.output);
  }
  expect(new Set(outputs).size).toBe(11);
  expect(tools.count('/status')).toBe(before + 11);
});

test('without skip_memoize the same poll is answered from the cache', async () => {
  const before = tools.count('/status');
  const first = await poll('memo_status', 'poll-memo', 'm1');
  const second = await poll('memo_status', 'poll-memo', 'm2');
  expect([first.cached, second.cached]).toEqual([false, true]);
  expect(second.output).toBe(first.output);
  expect(tools.count('/status')).toBe(before + 1);
});

test('a skip_memoize tool answering the same each time is still a loop: warned at the third identical result', async () => {
  const results = [];
  for (let i = 1; i <= 3; i++) results.push(await poll('stuck_status', 'poll-stuck', `s${i}`));
  expect(results.map((r) => r.cached)).toEqual([false, false, false]);
  expect(results.map((r) => r.warnings.filter((w) => w.startsWith('loop warning')).length)).toEqual([0, 0, 1]);
  expect(tools.count('/same')).toBe(3);
});

test('RegisterTools takes skip_memoize, and ListTools shows it', async () => {
  const spec = { name: 'tenant_status', effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', skipMemoize: true, executor: { case: 'http' as const, value: { url: `${tools.url}/status`, headers: {} } } };
  await expect(d.registry.registerTools({ tools: [spec] })).resolves.toMatchObject({ registered: 1 });
  const listed = (await d.registry.listTools({})).tools.find((t) => t.name === 'tenant_status');
  expect(listed?.skipMemoize).toBe(true);
  expect((await d.registry.listTools({})).tools.find((t) => t.name === 'job_status')?.skipMemoize).toBe(true);
  const first = await poll('tenant_status', 'poll-tenant', 't1');
  const second = await poll('tenant_status', 'poll-tenant', 't2');
  expect([first.cached, second.cached]).toEqual([false, false]);
  expect(second.output).not.toBe(first.output);
});

test('a tool registered again with skip_memoize is not answered from what was memoized before', async () => {
  const spec = (skipMemoize: boolean) => ({ name: 'switched', effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', skipMemoize, executor: { case: 'http' as const, value: { url: `${tools.url}/status`, headers: {} } } });
  await d.registry.registerTools({ tools: [spec(false)] });
  const first = await poll('switched', 'poll-switched', 'w1');
  expect((await poll('switched', 'poll-switched', 'w2')).cached).toBe(true);
  await d.registry.registerTools({ tools: [spec(true)], replace: true });
  const after = await poll('switched', 'poll-switched', 'w3');
  expect(after.cached).toBe(false);
  expect(after.output).not.toBe(first.output);
});

// Found in review: accepted silently on a side-effecting tool, which is never memoized, it read as
// if it turned something off. Refused in the spec check, which every registration goes through.
const SIDE_EFFECT_REFUSAL = 'skip_memoize applies to read-only tools: a side-effecting tool is never memoized; remove it';

test('RegisterTools refuses skip_memoize on a side-effecting tool, saying why', async () => {
  const spec = { name: 'send_status', effect: Effect.SIDE_EFFECT, inputSchema: '{"type":"object"}', skipMemoize: true, executor: { case: 'http' as const, value: { url: `${tools.url}/status`, headers: {} } } };
  await expect(d.registry.registerTools({ tools: [spec] })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: `tools[0]: tool "send_status": ${SIDE_EFFECT_REFUSAL}` });
  await expect(d.registry.registerTools({ tools: [{ ...spec, skipMemoize: false }] })).resolves.toMatchObject({ registered: 1 });
});

test('a config file with skip_memoize on a side-effecting tool does not start, saying why', async () => {
  await expect(startApp(`
tools:
  - { name: send_poll, effect: side_effect, skip_memoize: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/status" } }
`)).rejects.toThrow(`tools[0]: tool "send_poll": ${SIDE_EFFECT_REFUSAL}`);
});
