import { repairArguments } from '../../src/arguments';
import { startApp } from '../helpers/servers';

// Left from the misspelled-property work: a schema composed with `allOf` or `$ref` under
// `unevaluatedProperties: false` (pydantic's and zod's inheritance, a base model by `$ref`) got
// neither the hint nor the rename: only the object's own `properties` were read, and a model
// that wrote `citty` was told `unexpected property "citty"` with no word of `city`.

const BASE = { type: 'object', properties: { city: { type: 'string' }, country_code: { type: 'string' } }, required: ['city'] };
const BY_REF = { $defs: { base: BASE }, $ref: '#/$defs/base', properties: { units: { type: 'string' } }, unevaluatedProperties: false };
const REF_ONLY = { $defs: { base: BASE }, $ref: '#/$defs/base', unevaluatedProperties: false };
const BY_ALL_OF = { allOf: [BASE, { properties: { units: { type: 'string' } } }], unevaluatedProperties: false };

test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
  ['a $ref to a base model beside its own properties', BY_REF, { citty: 'Paris', units: 'metric' }],
  ['a $ref alone', REF_ONLY, { citty: 'Paris' }],
  ['allOf parts', BY_ALL_OF, { citty: 'Paris', units: 'metric' }],
])('renamed through %s', (_what, schema, sent) => {
  const out = repairArguments(sent, schema);
  expect(out.value).toEqual({ ...sent, citty: undefined, city: 'Paris' });
  expect(Object.hasOwn(out.value as object, 'citty')).toBe(false);
  expect(out.repairs).toEqual(['repaired /citty: renamed to "city" (a misspelling of a property the schema declares)']);
});

test.each<[string, Record<string, unknown>]>([
  ['a part that is conditional (anyOf)', { anyOf: [BASE], unevaluatedProperties: false }],
  ['a part that allows other names (patternProperties)', { allOf: [BASE, { patternProperties: { '^x-': {} } }], unevaluatedProperties: false }],
  ['a part with additionalProperties true', { allOf: [{ ...BASE, additionalProperties: true }], unevaluatedProperties: false }],
  ['a schema that allows other names', { allOf: [BASE] }],
  ['a $ref it cannot resolve', { $ref: '#/$defs/none', unevaluatedProperties: false }],
])('not renamed: %s', (_what, schema) => {
  const out = repairArguments({ citty: 'Paris' }, schema);
  expect(out.value).toEqual({ citty: 'Paris' });
  expect(out.repairs).toEqual([]);
});

test('through Dispatch: a lenient tool runs renamed; a strict one is refused with the hint, for $ref and allOf', async () => {
  const quote = (schema: object) => JSON.stringify(schema);
  const d = await startApp(`tools:
  - { name: weather, effect: read_only, lenient_arguments: true, input_schema: '${quote(BY_REF)}', builtin: { name: echo } }
  - { name: strict_ref, effect: read_only, input_schema: '${quote(BY_REF)}', builtin: { name: echo } }
  - { name: strict_all_of, effect: read_only, input_schema: '${quote(BY_ALL_OF)}', builtin: { name: echo } }`);
  try {
    const call = (id: string, name: string) => ({ id, name, arguments: '{"citty":"Paris","units":"metric"}' });
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [call('a', 'weather'), call('b', 'strict_ref'), call('c', 'strict_all_of')] });
    expect(results[0]!.isError).toBe(false);
    expect(JSON.parse(results[0]!.output)).toEqual({ city: 'Paris', units: 'metric' });
    for (const refused of results.slice(1)) {
      expect(refused.isError).toBe(true);
      expect(refused.error?.message).toContain('unexpected property "citty" (the schema allows no other properties; did you mean "city"?)');
    }
  } finally {
    await d.close();
  }
});
