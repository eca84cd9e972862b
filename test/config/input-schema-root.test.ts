import { startApp, type TestDispatch } from '../helpers/servers';
import { expectRefusedAlike, expectTakenAlike, startRefusal } from './tool-refusals';

// A tool's arguments are always a JSON object. An input_schema whose root accepts none loaded, and
// every call was then refused INVALID_ARGUMENTS: it is refused at load, naming what refuses it.

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp('tools: []\n');
});
afterAll(() => d.close());

const tool = (schema: unknown) => `name: t, effect: read_only, input_schema: '${JSON.stringify(schema)}', builtin: { name: echo }`;
const refusal = (what: string) => `tools[0] ("t"): a tool's arguments are a JSON object; input_schema's ${what} does not allow one`;

test.each([
  [{ type: 'string' }, 'type "string"'],
  [{ type: ['array', 'null'] }, 'type ["array","null"]'],
  [{ allOf: [{ type: 'object' }, false] }, 'subschema false at #/allOf/1'],
  [{ $ref: '#/$defs/args', $defs: { args: { type: 'integer' } } }, 'type "integer" at #/$defs/args'],
  [{ enum: ['a', 1, null] }, 'enum'],
  [{ const: 'x' }, 'const'],
  [{ not: {} }, 'not: {}'],
  [{ anyOf: [{ type: 'string' }, { type: 'null' }] }, 'anyOf (none of its members does: type "string" at #/anyOf/0; type "null" at #/anyOf/1)'],
])('%j is refused at load, by the start and by RegisterTools alike', async (schema, what) => {
  await expectRefusedAlike(d, tool(schema), refusal(what));
});

test('a root of no type, type object, or a type list or alternative holding object loads', async () => {
  for (const schema of [{}, { type: 'object' }, { type: ['object', 'null'] }, { anyOf: [{ type: 'string' }, { type: 'object' }] }, { enum: [{ a: 1 }, 'x'] }, { $ref: '#/$defs/a', $defs: { a: { type: 'object' } } }]) {
    await expectTakenAlike(d, tool(schema));
  }
  // A subschema that is not the root may take anything.
  await expectTakenAlike(d, tool({ type: 'object', properties: { name: { type: 'string' }, tags: { type: ['array', 'null'] } } }));
});

test('an input_schema that is false is refused as before (no schema of an object), in YAML as in JSON text', () => {
  expect(startRefusal("name: t, effect: read_only, input_schema: 'false', builtin: { name: echo }")).toBe('tools.yaml: tools[0] ("t"): input_schema must be a JSON object');
  expect(startRefusal('name: t, effect: read_only, input_schema: false, builtin: { name: echo }')).toBe('tools.yaml: tools[0].input_schema: must be a JSON Schema object: a mapping, or JSON text of one; got false');
});
