// Hostile input (DESIGN 9 and 11): every limit is enforced before any work is done - the tool
// server behind the tools counts zero requests for each refused input.
import * as grpc from '@grpc/grpc-js';
import { DEFAULT_LIMITS } from '../../src/options';
import { startToolServer, json, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, codeOf, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';
import { collectEvents } from './support/event-stream';

let tools: ToolServer;
let app: AuthApp;
const toolsYaml = (url: string) => `tools:
  - name: work
    effect: read_only
    http: { url: "${url}/work" }
`;

beforeAll(async () => {
  tools = await startToolServer({ '/work': json({ ok: true }) });
  app = await startAuthApp(toolsYaml(tools.url));
});
afterAll(async () => {
  await app.close();
  await tools.close();
});
beforeEach(() => {
  tools.received.length = 0;
});

const call = (i: number, args = '{}') => ({ id: `c${i}`, name: 'work', arguments: args });
const errorOf = (output: string) => JSON.parse(output) as { kind: string; message: string };

test('the defaults are those of DESIGN section 11', () => {
  expect(DEFAULT_LIMITS).toMatchObject({ maxMessageBytes: 4 * 1024 * 1024, maxCallsPerTurn: 128, maxArgumentBytes: 1024 * 1024, maxArgumentDepth: 64, maxSchemaBytes: 256 * 1024, maxSubscribersPerTenant: 64, subscriberBuffer: 1024 });
});

test('a 5 MiB request is RESOURCE_EXHAUSTED and nothing runs; the server goes on serving', async () => {
  const big = JSON.stringify({ s: 'a'.repeat(5 * 1024 * 1024) });
  expect(await codeOf(app.dispatch.dispatch({ sessionId: 's', calls: [call(0, big)] }))).toBe(grpc.status.RESOURCE_EXHAUSTED);
  expect(await codeOf(app.registry.registerTools({ tools: [{ name: 'huge', description: 'd'.repeat(5 * 1024 * 1024), executor: { case: 'builtin', value: { name: 'echo' } } }] }))).toBe(grpc.status.RESOURCE_EXHAUSTED);
  expect(tools.count()).toBe(0);
  expect((await app.dispatch.dispatch({ sessionId: 's', calls: [call(1)] })).results[0]!.isError).toBe(false);
});

test('129 calls in a turn are INVALID_ARGUMENT and none runs; 128 run', async () => {
  const s = await statusOf(app.dispatch.dispatch({ sessionId: 's', calls: Array.from({ length: 129 }, (_, i) => call(i)) }));
  expect(s).toEqual({ code: grpc.status.INVALID_ARGUMENT, details: '129 calls in one turn, over the limit of 128' });
  expect(tools.count()).toBe(0);
  const ok = await app.dispatch.dispatch({ sessionId: 's', calls: Array.from({ length: 128 }, (_, i) => call(i, `{"i":${i}}`)) });
  expect(ok.results.filter((r) => !r.isError)).toHaveLength(128);
});

test('arguments over 1 MiB are a soft INVALID_ARGUMENTS and the tool is not executed', async () => {
  const args = JSON.stringify({ s: 'a'.repeat(1024 * 1024) });
  const res = (await app.dispatch.dispatch({ sessionId: 's', calls: [call(0, args)] })).results[0]!;
  expect(res.isError).toBe(true);
  expect(errorOf(res.output)).toMatchObject({ kind: 'INVALID_ARGUMENTS', message: `arguments are ${args.length} bytes, over the limit of 1048576; the tool was not executed` });
  expect(tools.count()).toBe(0);
});

test('arguments nested 65 deep are refused unexecuted; 64 deep run', async () => {
  const nested = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
  const [deep, ok] = (await app.dispatch.dispatch({ sessionId: 's', calls: [call(0, nested(65)), call(1, nested(64))] })).results;
  expect(errorOf(deep!.output)).toMatchObject({ kind: 'INVALID_ARGUMENTS', message: 'arguments nest deeper than 64 levels; the tool was not executed' });
  expect(ok!.isError).toBe(false);
  expect(tools.count()).toBe(1);
});

test('RegisterTools refuses a 300 KiB schema, a schema nested 100 deep and a remote $ref, fetching nothing', async () => {
  const register = (inputSchema: string) => statusOf(app.registry.registerTools({ tools: [{ name: 'hostile', inputSchema, executor: { case: 'builtin', value: { name: 'echo' } } }] }));
  const big = JSON.stringify({ type: 'object', description: 'x'.repeat(300 * 1024) });
  expect(await register(big)).toEqual({ code: grpc.status.INVALID_ARGUMENT, details: `tools[0] ("hostile"): input_schema is ${big.length} bytes, over the limit of 262144 (limits.max_schema_bytes)` });
  const deep = `${'{"type":"object","properties":{"a":'.repeat(100)}{}${'}}'.repeat(100)}`;
  expect((await register(deep)).code).toBe(grpc.status.INVALID_ARGUMENT);
  const remote = await register(JSON.stringify({ $ref: `${tools.url}/schema.json` }));
  expect(remote.code).toBe(grpc.status.INVALID_ARGUMENT);
  expect(tools.count()).toBe(0);
  expect((await app.registry.listTools({})).tools.map((t) => t.name)).toEqual(['work']);
});

test('schema patterns run in linear time: a catastrophic-backtracking pattern cannot stall the server (ReDoS)', async () => {
  const inputSchema = JSON.stringify({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^(x+x+)+y$': { type: 'string' } } });
  await app.registry.registerTools({ tools: [{ name: 'redos', inputSchema, effect: 1, executor: { case: 'builtin', value: { name: 'echo' } } }] });
  const hostile = 'a'.repeat(30) + '!';
  const started = Date.now();
  const [res, res2] = (await app.dispatch.dispatch({ sessionId: 'redos', calls: [call(0, JSON.stringify({ s: hostile })), call(1, JSON.stringify({ ['x'.repeat(20)]: 'v' }))].map((c) => ({ ...c, name: 'redos' })) }, { deadlineMs: 10_000 })).results;
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(errorOf(res!.output).kind).toBe('INVALID_ARGUMENTS');
  expect(res2!.isError).toBe(false);
  const lookbehind = await statusOf(app.registry.registerTools({ tools: [{ name: 'lb', inputSchema: JSON.stringify({ properties: { s: { pattern: '(?<=a)b' } } }), executor: { case: 'builtin', value: { name: 'echo' } } }] }));
  expect(lookbehind.code).toBe(grpc.status.INVALID_ARGUMENT);
  await app.registry.removeTool({ name: 'redos' });
});

test('limits from the config file are honoured', async () => {
  const small = await startAuthApp(`${toolsYaml(tools.url)}limits:\n  max_calls_per_turn: 2\n  max_argument_bytes: 64\n  max_message_bytes: 65536\n  max_schema_bytes: 100\n`);
  try {
    expect(await codeOf(small.dispatch.dispatch({ sessionId: 's', calls: [call(0), call(1), call(2)] }))).toBe(grpc.status.INVALID_ARGUMENT);
    const res = (await small.dispatch.dispatch({ sessionId: 's', calls: [call(0, JSON.stringify({ s: 'a'.repeat(64) }))] })).results[0]!;
    expect(errorOf(res.output).kind).toBe('INVALID_ARGUMENTS');
    expect(await codeOf(small.dispatch.dispatch({ sessionId: 's', calls: [call(0), { id: 'x', name: 'work', arguments: 'a'.repeat(70_000) }] }))).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(await codeOf(small.registry.registerTools({ tools: [{ name: 't', inputSchema: JSON.stringify({ type: 'object', description: 'd'.repeat(100) }), executor: { case: 'builtin', value: { name: 'echo' } } }] }))).toBe(grpc.status.INVALID_ARGUMENT);
    expect(tools.count()).toBe(0);
  } finally {
    await small.close();
  }
});

test('Subscribe: a tenant may hold max_subscribers_per_tenant streams; one more is RESOURCE_EXHAUSTED, other tenants unaffected', async () => {
  const A: TestToken = { token: 'subs-a', tenant: 'a', scopes: ['subscribe'] };
  const B: TestToken = { token: 'subs-b', tenant: 'b', scopes: ['subscribe'] };
  const limited = await startAuthApp(`limits:\n  max_subscribers_per_tenant: 3\n${authYaml([A, B])}`);
  const streams = [1, 2, 3].map(() => collectEvents(limited.dispatch, {}, bearer(A.token)));
  try {
    await Promise.all(streams.map((s) => s.ready()));
    const fourth = collectEvents(limited.dispatch, {}, bearer(A.token));
    expect(await Promise.race([fourth.ended, new Promise((r) => setTimeout(() => r('still open'), 2000))])).toBe(grpc.status.RESOURCE_EXHAUSTED);
    const other = collectEvents(limited.dispatch, {}, bearer(B.token));
    expect(await Promise.race([other.ended, new Promise((r) => setTimeout(() => r('still open'), 500))])).toBe('still open');
    other.cancel();
    streams.pop()!.cancel();
    await new Promise((r) => setTimeout(r, 200));
    const again = collectEvents(limited.dispatch, {}, bearer(A.token));
    expect(await Promise.race([again.ended, new Promise((r) => setTimeout(() => r('still open'), 500))])).toBe('still open');
    again.cancel();
  } finally {
    for (const s of streams) s.cancel();
    await limited.close();
  }
});
