import { performance } from 'node:perf_hooks';
import { keywordTypo } from '../../src/registry/keyword-typos';
import { startApp, type TestDispatch } from '../helpers/servers';
import { expectRefusedAlike, expectTakenAlike } from './tool-refusals';

// Ajv runs with strict mode off (vendor keywords must load), so it ignored a misspelt keyword, and
// the check it meant was off: "propertees", "requird", "additionalproperties", "maxLenght". A key at
// a schema position that is a near miss of a keyword (the same but for case; or two edits at most
// from one of 5 letters or more, from the same first letter) is refused at load, with its pointer.

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp('tools: []\n');
});
afterAll(() => d.close());

const tool = (schema: unknown) => `name: t, effect: read_only, input_schema: '${JSON.stringify(schema)}', builtin: { name: echo }`;
const refusal = (key: string, pointer: string, meant: string) =>
  `tools[0] ("t"): input_schema's key "${key}" at ${pointer} is not a JSON Schema keyword, so it checks nothing: did you mean "${meant}"? (a keyword of your own can start with x-)`;

test.each([
  [{ type: 'object', propertees: { a: { type: 'string' } } }, 'propertees', '#/propertees', 'properties'],
  [{ type: 'object', properties: { a: { type: 'string' } }, requird: ['a'] }, 'requird', '#/requird', 'required'],
  [{ type: 'object', additionalproperties: false }, 'additionalproperties', '#/additionalproperties', 'additionalProperties'],
  [{ type: 'object', properties: { name: { type: 'string', maxLenght: 5 } } }, 'maxLenght', '#/properties/name/maxLenght', 'maxLength'],
  [{ type: 'object', properties: { tags: { type: 'array', items: { type: 'string', pattrn: '^a' } } } }, 'pattrn', '#/properties/tags/items/pattrn', 'pattern'],
  [{ type: 'object', $defs: { a: { type: 'object', minProperites: 1 } } }, 'minProperites', '#/$defs/a/minProperites', 'minProperties'],
  [{ type: 'object', allOf: [{ required: ['a'] }, { Required: ['b'] }] }, 'Required', '#/allOf/1/Required', 'required'],
  [{ type: 'object', properties: { 'a/b': { enum: [1], defualt: 1 } } }, 'defualt', '#/properties/a~1b/defualt', 'default'],
  [{ type: 'object', patternProperties: { '^x': { type: 'string', fromat: 'email' } } }, 'fromat', '#/patternProperties/^x/fromat', 'format'],
  [{ type: 'object', properties: { a: { anyof: [{ type: 'string' }] } } }, 'anyof', '#/properties/a/anyof', 'anyOf'],
  [{ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', definitions: { a: { type: 'object', requird: ['x'] } } }, 'requird', '#/definitions/a/requird', 'required'],
])('%j is refused at load, naming the key, its pointer and the keyword meant', async (schema, key, pointer, meant) => {
  await expectRefusedAlike(d, tool(schema), refusal(key, pointer, meant));
});

test('vendor keywords, property names and data that look like keywords load as before', async () => {
  const schema = {
    type: 'object',
    'x-items': 1,
    'x-propertees': { requird: 1 },
    example: { requird: 'a' },
    nullable: false,
    discriminator: { propertyName: 'kind', mapping: {} },
    uiSchema: {},
    $comment: 'requird is a property name',
    properties: {
      requird: { enum: [{ propertees: 1 }, { requird: 1 }], examples: [{ maxLenght: 2 }], default: { requird: 1 } },
      propertees: { const: { additionalproperties: true } },
      maxLenght: { type: 'integer', deprecated: true, readOnly: true, 'x-order': 1 },
    },
    required: ['requird'],
    $defs: { requird: { type: 'string' } },
  };
  await expectTakenAlike(d, tool(schema));
  // Four letters or fewer: only a change of case is a near miss (`tpye` is no keyword, nor a typo taken for one).
  await expectTakenAlike(d, tool({ type: 'object', tpye: 'x', enums: [1], ref: '#' }));
  await expectRefusedAlike(d, tool({ type: 'object', Enum: [{}] }), refusal('Enum', '#/Enum', 'enum'));
});

test('a large schema (compiled in the worker thread for RegisterTools, on the loop at start) is refused alike', async () => {
  const properties = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`p${i}`, { type: 'string', description: `field ${i}` }]));
  const schema = { type: 'object', properties: { ...properties, last: { type: 'object', properties: { deep: { type: 'array', itmes: { type: 'string' } } } } } };
  expect(JSON.stringify(schema).length).toBeGreaterThan(4096);
  await expectRefusedAlike(d, tool(schema), refusal('itmes', '#/properties/last/properties/deep/itmes', 'items'));
});

test('the look is bounded: 250 KB of schema with two distinct unknown keys on each of 6,000 subschemas takes under a second', () => {
  // Keys from the first letter of keywords and as long as them: each is compared with those.
  const properties = Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`p${i}`, { type: 'string', [`pr${i}opertyz`]: 1, [`m${i}xLengthqq`]: 1 }]));
  const schema = { type: 'object', properties };
  expect(JSON.stringify(schema).length).toBeGreaterThan(200_000);
  const started = performance.now();
  expect(keywordTypo(schema)).toBeUndefined();
  expect(performance.now() - started).toBeLessThan(1000);
});
