// Schema patterns are counted per tenant, given back when a tool goes, and kept only from
// registrations that succeed (found in review): they were interned in one process-wide set of
// 5,000 with no owner, never released and kept from refused requests, so one tenant's refused
// schema of 5,000 patterns left every other tenant's pattern refused until a restart.
import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { MAX_PATTERNS_PER_TENANT } from '../../src/registry/pattern-pool';
import { authYaml, bearer, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';

jest.setTimeout(120_000);

const A: TestToken = { token: 'tenant-a-admin-token', tenant: 'team-a', scopes: ['dispatch', 'admin'] };
const B: TestToken = { token: 'tenant-b-admin-token', tenant: 'team-b', scopes: ['dispatch', 'admin'] };
let app: AuthApp;
beforeAll(async () => {
  app = await startAuthApp(authYaml([A, B]));
});
afterAll(() => app.close());

const tool = (name: string, inputSchema: string) => ({ name, effect: Effect.READ_ONLY, inputSchema, executor: { case: 'builtin' as const, value: { name: 'echo' } } });
/** A schema of `count` distinct patterns, `^<tag>N$`. */
function patterns(tag: string, count: number): string {
  const props = Array.from({ length: count }, (_, i) => `"p${i}":{"type":"string","pattern":"^${tag}${i}$"}`);
  return `{"type":"object","properties":{${props.join(',')}}}`;
}
const register = (who: TestToken, tools: ReturnType<typeof tool>[], replace = false) => statusOf(app.registry.registerTools({ tools, replace }, bearer(who.token)));
const ZIP = '{"type":"object","properties":{"zip":{"type":"string","pattern":"^[0-9]{5}$"}}}';

test("a tenant's schema of 5,000 patterns is refused for that tenant alone; another's pattern still registers", async () => {
  const refused = await register(A, [tool('hog', patterns('x', 5_000))]);
  expect(refused).toEqual({
    code: grpc.status.INVALID_ARGUMENT,
    details: `tools[0] ("hog"): input_schema does not compile: tenant "team-a" would hold ${MAX_PATTERNS_PER_TENANT + 1} distinct patterns, over the limit of ${MAX_PATTERNS_PER_TENANT} per tenant; use fewer distinct "pattern" keywords, or remove tools it no longer uses`,
  });
  expect(await register(B, [tool('zip', ZIP)])).toEqual({ code: 'ok', details: '' });
  expect((await app.registry.listTools({}, bearer(B.token))).tools.map((t) => t.name)).toContain('zip');
  await app.registry.removeTool({ name: 'zip' }, bearer(B.token));
});

test('a refused request keeps none of the patterns its other schemas took', async () => {
  const bad = tool('bad', '{"type":"object","properties":{"a":{"type":"string","pattern":"(?=x)"}}}');
  expect((await register(A, [tool('first', patterns('r', 300)), bad])).code).toBe(grpc.status.INVALID_ARGUMENT);
  // The 300 would leave room for 200 only.
  expect(await register(A, [tool('then', patterns('s', 450))])).toEqual({ code: 'ok', details: '' });
  await app.registry.removeTool({ name: 'then' }, bearer(A.token));
});

test("a tool removed or replaced gives its patterns back to its tenant", async () => {
  expect((await register(A, [tool('t', patterns('u', 450))])).code).toBe('ok');
  expect((await register(A, [tool('t2', patterns('v', 100))])).code).toBe(grpc.status.INVALID_ARGUMENT);
  // Replaced: the 450 only the old one held do not count while the new one compiles, and go with it.
  expect(await register(A, [tool('t', patterns('w', 40))], true)).toEqual({ code: 'ok', details: '' });
  expect(await register(A, [tool('t2', patterns('v', 400))])).toEqual({ code: 'ok', details: '' });
  expect((await app.registry.removeTool({ name: 't' }, bearer(A.token))).removed).toBe(true);
  expect((await app.registry.removeTool({ name: 't2' }, bearer(A.token))).removed).toBe(true);
  // Removed: the tenant may take its whole share again.
  expect(await register(A, [tool('t', patterns('y', MAX_PATTERNS_PER_TENANT))])).toEqual({ code: 'ok', details: '' });
  // Patterns shared with another tenant count for each: B's copy is its own.
  expect(await register(B, [tool('t', patterns('y', MAX_PATTERNS_PER_TENANT))])).toEqual({ code: 'ok', details: '' });
  await app.registry.removeTool({ name: 't' }, bearer(A.token));
  await app.registry.removeTool({ name: 't' }, bearer(B.token));
});
