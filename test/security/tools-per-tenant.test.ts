// limits.max_tools_per_tenant: RegisterTools refuses a tenant more tools of its own, before
// registering any; replacing a tool does not count twice; the config file's tools count for no
// tenant; other tenants are unaffected.
import { status } from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { authYaml, bearer, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';

const A: TestToken = { token: 'tenant-a-admin-token', tenant: 'team-a', scopes: ['dispatch', 'admin'] };
const B: TestToken = { token: 'tenant-b-admin-token', tenant: 'team-b', scopes: ['dispatch', 'admin'] };

let app: AuthApp;
beforeAll(async () => {
  const configTools = 'tools:\n  - { name: shared_1, effect: read_only, builtin: { name: echo } }\n  - { name: shared_2, effect: read_only, builtin: { name: echo } }\n';
  app = await startAuthApp(`${configTools}limits:\n  max_tools_per_tenant: 3\n${authYaml([A, B])}`);
});
afterAll(() => app.close());

const spec = (name: string) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'builtin' as const, value: { name: 'echo' } } });
const register = (who: TestToken, names: string[], replace = false) => app.registry.registerTools({ tools: names.map(spec), replace }, bearer(who.token));
const own = async (who: TestToken) => (await app.registry.listTools({}, bearer(who.token))).tools.map((t) => t.name).filter((n) => !n.startsWith('shared_'));

test('a tenant may own max_tools_per_tenant tools (the config file\'s do not count); one more is RESOURCE_EXHAUSTED and none of the request is registered', async () => {
  await expect(register(A, ['a1', 'a2'])).resolves.toMatchObject({ registered: 2 });
  expect(await statusOf(register(A, ['a3', 'a4']))).toEqual({
    code: status.RESOURCE_EXHAUSTED,
    details: 'tenant "team-a" would have 4 tools, over the limit of 3 (limits.max_tools_per_tenant); remove tools it no longer uses',
  });
  expect(await own(A)).toEqual(['a1', 'a2']);
  await expect(register(A, ['a3'])).resolves.toMatchObject({ registered: 1 });
});

test('replacing tools of the same name does not count them twice; after a removal there is room again', async () => {
  await expect(register(A, ['a1', 'a2', 'a3'], true)).resolves.toMatchObject({ registered: 3 });
  expect((await statusOf(register(A, ['a1', 'a4'], true))).code).toBe(status.RESOURCE_EXHAUSTED);
  await app.registry.removeTool({ name: 'a3' }, bearer(A.token));
  await expect(register(A, ['a1', 'a4'], true)).resolves.toMatchObject({ registered: 2 });
  expect(await own(A)).toEqual(['a1', 'a2', 'a4']);
});

test('the limit is per tenant: another tenant registers its own three', async () => {
  await expect(register(B, ['b1', 'b2', 'b3'])).resolves.toMatchObject({ registered: 3 });
  expect(await own(B)).toEqual(['b1', 'b2', 'b3']);
});

test('the limit is checked before the request is looked at further: an over-limit request with a bad spec is RESOURCE_EXHAUSTED', async () => {
  const bad = { ...spec('bad'), inputSchema: '{not json' };
  const answer = await statusOf(app.registry.registerTools({ tools: [bad] }, bearer(B.token)));
  expect(answer.code).toBe(status.RESOURCE_EXHAUSTED);
});
