import { repairArguments } from '../../src/arguments';
import { startApp } from '../helpers/servers';

// Found trying the example tools as a user: get_weather is lenient, and `{"citty":"Paris"}` was
// refused (`missing required property "city"`, `unexpected property "citty"`) though its repair
// turned `"city": 42` into "42". A property an object's schema does not allow
// (additionalProperties: false), misspelling the one declared property the object lacks, is now
// renamed on a lenient tool, read as an enum value's misspelling is (one typo in one word, never
// its first letter, or other separators; on a tool with side effects only a doubled letter).

const schema = {
  type: 'object',
  properties: { city: { type: 'string' }, country_code: { type: 'string' }, address: { type: 'string' }, email: { type: 'string' }, user: { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false } },
  additionalProperties: false,
};

test.each<[string, Record<string, unknown>, Record<string, unknown>, string]>([
  ['a typo', { citty: 'Paris' }, { city: 'Paris' }, 'repaired /citty: renamed to "city" (a misspelling of a property the schema declares)'],
  ['other separators', { countryCode: 'FR' }, { country_code: 'FR' }, 'repaired /countryCode: renamed to "country_code" (a misspelling of a property the schema declares)'],
  ['in a nested object', { user: { nme: 'Bob' } }, { user: { name: 'Bob' } }, 'repaired /user/nme: renamed to "name" (a misspelling of a property the schema declares)'],
])('read-only, %s is renamed', (_what, sent, expected, line) => {
  const out = repairArguments(sent, schema);
  expect(out.value).toEqual(expected);
  expect(out.repairs).toEqual([line]);
});

test('with side effects only a doubled letter is corrected', () => {
  expect(repairArguments({ adress: 'x' }, schema, { sideEffects: true }).value).toEqual({ address: 'x' });
  expect(repairArguments({ emial: 'x' }, schema, { sideEffects: true }).value).toEqual({ emial: 'x' });
});

test.each<[string, Record<string, unknown>]>([
  ['a property the object holds already', { city: 'Paris', citty: 'Lyon' }],
  ['two misspellings of one property', { citty: 'Paris', ciity: 'Lyon' }],
  ['a name near none', { colour: 'red' }],
  ['a first letter changed', { sity: 'Paris' }],
])('not renamed: %s', (_what, sent) => {
  const out = repairArguments(sent, schema);
  expect(out.value).toEqual(sent);
  expect(out.repairs).toEqual([]);
});

test('a schema that allows other properties keeps them as sent', () => {
  const open = { type: 'object', properties: { city: { type: 'string' } } };
  expect(repairArguments({ citty: 'Paris', city: 1 }, open).value).toEqual({ citty: 'Paris', city: '1' });
});

test('through Dispatch: a lenient tool runs with the property renamed, a strict tool refuses it with the hint', async () => {
  const text = JSON.stringify({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false });
  const d = await startApp(`tools:
  - { name: weather, effect: read_only, lenient_arguments: true, input_schema: '${text}', builtin: { name: echo } }
  - { name: strict_weather, effect: read_only, input_schema: '${text}', builtin: { name: echo } }`);
  try {
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'a', name: 'weather', arguments: '{"citty":"Paris"}' }, { id: 'b', name: 'strict_weather', arguments: '{"citty":"Paris"}' }] });
    expect(results[0]!.isError).toBe(false);
    expect(JSON.parse(results[0]!.output)).toEqual({ city: 'Paris' });
    expect(results[0]!.warnings).toContain('repaired /citty: renamed to "city" (a misspelling of a property the schema declares)');
    expect(results[1]!.isError).toBe(true);
    expect(results[1]!.error?.message).toContain('unexpected property "citty" (the schema allows no other properties; did you mean "city"?)');
  } finally {
    await d.close();
  }
});

test('a declared __proto__ is renamed to as an own property, the prototype untouched', () => {
  // Parsed, as a schema is: an object literal's `__proto__` would set its prototype instead.
  const declared = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}},"additionalProperties":false}') as Record<string, unknown>;
  const out = repairArguments(JSON.parse('{"__protoo__":"x"}'), declared);
  expect(Object.getPrototypeOf(out.value)).toBe(Object.prototype);
  expect(Object.hasOwn(out.value as object, '__proto__')).toBe(true);
});
