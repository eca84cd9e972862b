import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { authYaml, bearer, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';

// A tenant's schema whose subschemas multiply at one value froze every tenant (found in review):
// 21 $defs, each a oneOf of two $refs to the next (1.4 KB), and one call with {"a":1} held the
// event loop 5.8 s while Ajv evaluated 2^21 subschemas; another tenant's ListTools hit its
// deadline. Such a schema is now refused when registered, from a tenant or from the config file.

const A: TestToken = { token: 'tenant-a-admin-token', tenant: 'team-a', scopes: ['dispatch', 'admin'] };
const B: TestToken = { token: 'tenant-b-token', tenant: 'team-b', scopes: ['dispatch'] };
let app: AuthApp;
beforeAll(async () => {
  app = await startAuthApp(authYaml([A, B]));
});
afterAll(() => app.close());

function bomb(levels: number, keyword = 'oneOf'): object {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) defs[`l${i}`] = { [keyword]: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
  defs[`l${levels}`] = { type: 'string' };
  return { type: 'object', properties: { a: { $ref: '#/$defs/l0' } }, $defs: defs };
}
const register = (name: string, schema: object) =>
  statusOf(app.registry.registerTools({ tools: [{ name, effect: Effect.READ_ONLY, inputSchema: JSON.stringify(schema), executor: { case: 'builtin', value: { name: 'echo' } } }] }, bearer(A.token)));

test('RegisterTools refuses a schema applying more than 10,000 subschemas to one value, saying so; other tenants are not held up', async () => {
  expect(await register('bomb', bomb(21))).toEqual({
    code: grpc.status.INVALID_ARGUMENT,
    details:
      'tools[0] ("bomb"): input_schema does not compile: #/$defs/l9 applies more than 10000 subschemas to one value ' +
      '(allOf, anyOf, oneOf, not, if/then/else, dependentSchemas and $ref add up, and multiply through $ref): validating a call could take exponential time',
  });
  const started = Date.now();
  expect((await app.registry.listTools({}, bearer(B.token, { deadlineMs: 2_000 }))).tools).toEqual([]);
  expect(Date.now() - started).toBeLessThan(1_000);
  const [result] = (await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'bomb', arguments: '{"a":1}' }] }, bearer(A.token))).results;
  expect(JSON.parse(result!.output)).toMatchObject({ kind: 'UNKNOWN_TOOL' });
});

test('RegisterTools refuses a $ref loop that stays at one value', async () => {
  const schema = { type: 'object', properties: { x: { $ref: '#/$defs/a' } }, $defs: { a: { anyOf: [{ $ref: '#/$defs/b' }, { type: 'string' }] }, b: { allOf: [{ $ref: '#/$defs/a' }] } } };
  expect(await register('loop', schema)).toEqual({
    code: grpc.status.INVALID_ARGUMENT,
    details:
      'tools[0] ("loop"): input_schema does not compile: #/$defs/b/allOf/0 leads back to #/$defs/a at the same place in the arguments ' +
      '(through allOf, anyOf, oneOf, not, if/then/else, dependentSchemas or $ref, never reaching a property or item): validating would never end',
  });
});

test('a recursive schema for a JSON tree, and a chain below the bound, register and validate calls', async () => {
  const tree = { type: 'object', properties: { root: { $ref: '#/$defs/node' } }, $defs: { node: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, kids: { type: 'array', items: { $ref: '#/$defs/node' } } } } } };
  expect(await register('tree', tree)).toEqual({ code: 'ok', details: '' });
  expect(await register('chain', bomb(11, 'anyOf'))).toEqual({ code: 'ok', details: '' });
  let node: unknown = { name: 'leaf' };
  for (let i = 0; i < 30; i++) node = { name: `n${i}`, kids: [node, { name: 'x' }] };
  const calls = [
    { id: 'c1', name: 'tree', arguments: JSON.stringify({ root: node }) },
    { id: 'c2', name: 'tree', arguments: JSON.stringify({ root: { name: 'r', kids: [{ kids: [] }] } }) },
    { id: 'c3', name: 'chain', arguments: '{"a":"s"}' },
    { id: 'c4', name: 'chain', arguments: '{"a":1}' },
  ];
  const results = (await app.dispatch.dispatch({ sessionId: 't', calls }, bearer(A.token))).results;
  expect(results.map((r) => r.isError)).toEqual([false, true, false, true]);
  expect(JSON.parse(results[1]!.output)).toMatchObject({ kind: 'INVALID_ARGUMENTS' });
});

test("the operator's config file may not hold such a schema either", async () => {
  const yaml = `tools:\n  - name: bomb\n    effect: read_only\n    builtin: { name: echo }\n    input_schema: ${JSON.stringify(bomb(21))}\n`;
  await expect(startAuthApp(yaml)).rejects.toThrow(/input_schema does not compile: #\/\$defs\/l9 applies more than 10000 subschemas to one value/);
});

// Found in review of a681469: a 141-byte schema whose properties.a and patternProperties '^a$' both
// $ref the schema doubled Ajv's work per level of {"a":{"a":...}}; a 134-byte argument froze the
// process 19 s. The 2020-12 $dynamicRef recursion was refused although Ajv validates it.
const deeper = (pointer: string, name: string) => ({
  code: grpc.status.INVALID_ARGUMENT,
  details:
    `tools[0] ("${name}"): input_schema does not compile: #${pointer} applies more than 10000 subschemas to one value 13 levels below the value it validates ` +
    '(properties, patternProperties, additionalProperties, unevaluatedProperties, propertyNames, prefixItems, items, contains and unevaluatedItems reaching the same part of a value add up, ' +
    'and multiply through $ref): validating a call could take exponential time',
});

test('RegisterTools refuses a recursive $ref reached twice at the same property or item, saying so', async () => {
  const patterns = { $ref: '#/$defs/n', $defs: { n: { type: 'object', properties: { a: { $ref: '#/$defs/n' } }, patternProperties: { '^a$': { $ref: '#/$defs/n' } } } } };
  expect(await register('patterns', patterns)).toEqual(deeper('/$defs/n', 'patterns'));
  const items = { $ref: '#/$defs/n', $defs: { n: { type: 'array', items: { $ref: '#/$defs/n' }, contains: { $ref: '#/$defs/n' } } } };
  expect(await register('items', items)).toEqual(deeper('/$defs/n', 'items'));
});

test('the 2020-12 $dynamicRef recursion and a schema with $refs in examples and default register and validate calls', async () => {
  const tree = { $dynamicAnchor: 'node', type: 'object', additionalProperties: { anyOf: [{ type: 'string' }, { $dynamicRef: '#node' }] } };
  expect(await register('dyn', tree)).toEqual({ code: 'ok', details: '' });
  const data = { type: 'object', properties: { doc: { type: 'object', default: { $ref: 'other.json#/x' }, examples: [{ $ref: '#/$defs/Address' }] } } };
  expect(await register('data', data)).toEqual({ code: 'ok', details: '' });
  const calls = [
    { id: 'c1', name: 'dyn', arguments: '{"a":"x","b":{"c":"y"}}' },
    { id: 'c2', name: 'dyn', arguments: '{"a":{"b":1}}' },
    { id: 'c3', name: 'data', arguments: '{}' },
  ];
  const results = (await app.dispatch.dispatch({ sessionId: 'd', calls }, bearer(A.token))).results;
  expect(results.map((r) => r.isError)).toEqual([false, true, false]);
});

// Found by the edge-case hunt: Ajv's own compile overflowed its stack on a schema that is only a
// $ref to itself ('input_schema does not compile: Maximum call stack size exceeded').
test('RegisterTools refuses a $ref to itself, naming the loop', async () => {
  expect(await register('self', { $ref: '#/$defs/a', $defs: { a: { $ref: '#/$defs/a' } } })).toEqual({
    code: grpc.status.INVALID_ARGUMENT,
    details: 'tools[0] ("self"): input_schema does not compile: the $ref chain #/$defs/a -> #/$defs/a comes back where it started: each passes the same value on to the next, so validating would never end',
  });
});
