import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { authYaml, bearer, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';

// Found by the edge-case hunt: names Object.prototype has were never enforced. `required:
// ["constructor","toString","valueOf"]` passed `{}` and the tool ran; `properties.toString: {type:
// string}` read the inherited function; a default `{"__proto__":{"x":1},"y":2}` reached the tool as
// `{"y":2}` (Ajv wrote it into its code as an object literal, where "__proto__" sets the prototype).

const A: TestToken = { token: 'tenant-a-admin-token', tenant: 'team-a', scopes: ['dispatch', 'admin'] };
let app: AuthApp;
beforeAll(async () => {
  app = await startAuthApp(authYaml([A]));
});
afterAll(() => app.close());

const register = (name: string, schema: string) =>
  statusOf(app.registry.registerTools({ tools: [{ name, effect: Effect.READ_ONLY, inputSchema: schema, executor: { case: 'builtin', value: { name: 'echo' } } }], replace: false }, bearer(A.token)));
const call = async (name: string, args: string) => {
  const [result] = (await app.dispatch.dispatch({ sessionId: `s-${name}`, calls: [{ id: 'c1', name, arguments: args }] }, bearer(A.token))).results;
  return { isError: result!.isError, output: result!.output };
};

test('required names that objects inherit are enforced: the tool is not run without them', async () => {
  expect(await register('inherited', '{"type":"object","required":["constructor","toString","valueOf"]}')).toEqual({ code: 'ok', details: '' });
  const refused = await call('inherited', '{}');
  expect(refused.isError).toBe(true);
  expect(JSON.parse(refused.output)).toMatchObject({
    kind: 'INVALID_ARGUMENTS',
    message: 'invalid arguments: /: missing required property "constructor"; /: missing required property "toString"; /: missing required property "valueOf"; the tool was not executed',
  });
  expect(await call('inherited', '{"constructor":1,"toString":2,"valueOf":3}')).toEqual({ isError: false, output: '{"constructor":1,"toString":2,"valueOf":3}' });
});

test('a property named toString is validated as the arguments give it, never as the inherited function', async () => {
  expect(await register('named', '{"type":"object","properties":{"toString":{"type":"string"}},"required":["toString"]}')).toEqual({ code: 'ok', details: '' });
  expect(JSON.parse((await call('named', '{}')).output)).toMatchObject({ message: 'invalid arguments: /: missing required property "toString"; the tool was not executed' });
  expect(JSON.parse((await call('named', '{"toString":1}')).output)).toMatchObject({ kind: 'INVALID_ARGUMENTS' });
  expect(await call('named', '{"toString":"s"}')).toEqual({ isError: false, output: '{"toString":"s"}' });
});

test('defaults keep their "__proto__" keys, and fill properties named like inherited ones', async () => {
  const schema = '{"type":"object","properties":{"a":{"type":"object","default":{"__proto__":{"x":1},"y":2}},"toString":{"type":"string","default":"d"}}}';
  expect(await register('defaults', schema)).toEqual({ code: 'ok', details: '' });
  expect(await call('defaults', '{}')).toEqual({ isError: false, output: '{"a":{"__proto__":{"x":1},"y":2},"toString":"d"}' });
  // Each call gets its own copy of the default.
  expect(await call('defaults', '{"toString":"s"}')).toEqual({ isError: false, output: '{"toString":"s","a":{"__proto__":{"x":1},"y":2}}' });
  // A property named "__proto__" is refused: validation never checked it (audit/prototype-names-schema).
  expect((await register('proto_property', '{"type":"object","properties":{"__proto__":{"type":"number","default":3}}}')).code).not.toBe('ok');
});
