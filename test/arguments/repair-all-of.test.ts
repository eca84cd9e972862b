import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { repairArguments } from '../../src/arguments';
import { startApp } from '../helpers/servers';

// Left from the composed-schema work: lenient repair read an object's own `properties` only. A
// schema composed with `allOf` (a `$ref` to a base model beside the model's own properties, as
// pydantic and zod write inheritance; TypeBox's and zod's intersections) had the parts' fields
// left unrepaired, and pydantic v1's wrapper around a nested model's or enum's `$ref`
// (`{"description": ..., "allOf": [{"$ref": ...}]}`, which LangChain keeps around the model
// itself once it dereferences) hid the whole subschema: `"zip": "12345"` or `"unit": "Celsius"`
// was refused one level down, where the same schema written in place was repaired.

const UNIT = { title: 'Unit', type: 'string', enum: ['celsius', 'fahrenheit'] };
const ADDRESS = { type: 'object', properties: { zip: { type: 'integer' }, street: { type: 'string' } } };

test("pydantic v1's one-member allOf around a $ref or a dereferenced model is read through", () => {
  const v1 = {
    type: 'object',
    properties: {
      unit: { description: 'the unit', allOf: [{ $ref: '#/definitions/Unit' }] },
      address: { description: 'where', allOf: [{ $ref: '#/definitions/Address' }] },
      inlined: { description: 'dereferenced', allOf: [UNIT] },
    },
    definitions: { Unit: UNIT, Address: ADDRESS },
  };
  const out = repairArguments({ unit: 'Celsius', address: { zip: '02134' }, inlined: 'FAHRENHEIT' }, v1);
  expect(out.value).toEqual({ unit: 'celsius', address: { zip: 2134 }, inlined: 'fahrenheit' });
  expect(out.repairs).toEqual([
    'repaired /unit: "Celsius" -> "celsius" (enum value corrected)',
    'repaired /address/zip: "02134" -> 2134 (string to number)',
    'repaired /inlined: "FAHRENHEIT" -> "fahrenheit" (enum value corrected)',
  ]);
});

test('the fields of allOf parts and of a base model by $ref are repaired, in the order written, own fields first', () => {
  const inherited = { $ref: '#/$defs/Base', properties: { verbose: { type: 'boolean' } }, $defs: { Base: { type: 'object', properties: { count: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['count'] } } };
  expect(repairArguments({ count: '3', tags: 'red', verbose: 'true' }, inherited)).toEqual({
    value: { count: 3, tags: ['red'], verbose: true },
    repairs: ['repaired /verbose: "true" -> true (string to boolean)', 'repaired /count: "3" -> 3 (string to number)', 'repaired /tags: "red" -> ["red"] (bare value wrapped in an array)'],
    refused: [],
  });
  const intersection = { allOf: [{ type: 'object', properties: { a: { type: 'integer' } } }, { type: 'object', properties: { b: { type: 'number' }, note: { type: 'string' } } }] };
  expect(repairArguments({ a: '1', b: '2.5', note: null }, intersection)).toMatchObject({ value: { a: 1, b: 2.5 }, refused: [] });
});

test("a part's required field keeps its null; a field two parts declare differently is not repaired", () => {
  const schema = { allOf: [{ properties: { id: { type: 'string' }, limit: { type: 'integer' } }, required: ['id'] }, { properties: { limit: { type: 'string' } } }], properties: { other: { type: 'integer' } } };
  const out = repairArguments({ id: null, limit: '5', other: '7' }, schema);
  expect(out.value).toEqual({ id: null, limit: '5', other: 7 });
  expect(out.repairs).toEqual(['repaired /other: "7" -> 7 (string to number)']);
});

test('an allOf wrapper that says more of the value, or has more members, is not read as its member', () => {
  const schema = {
    type: 'object',
    properties: {
      two: { allOf: [UNIT, { minLength: 1 }] },
      typed: { type: 'string', allOf: [UNIT] },
      either: { anyOf: [{ type: 'integer' }], allOf: [UNIT] },
    },
  };
  // `two`'s members are both read as parts of one object's schema only; a string is not an object.
  const out = repairArguments({ two: 'Celsius', typed: 'Celsius', either: 'Celsius' }, schema);
  expect(out.value).toEqual({ two: 'Celsius', typed: 'Celsius', either: 'Celsius' });
  expect(out.repairs).toEqual([]);
});

test('through Dispatch: a lenient tool with a pydantic v1 schema runs repaired; a strict one is refused', async () => {
  const schema = JSON.stringify({
    type: 'object',
    properties: { unit: { description: 'the unit', allOf: [{ $ref: '#/definitions/Unit' }] }, address: { allOf: [{ $ref: '#/definitions/Address' }] } },
    definitions: { Unit: UNIT, Address: ADDRESS },
  });
  const d = await startApp(`tools:
  - { name: weather, effect: read_only, lenient_arguments: true, input_schema: '${schema}', builtin: { name: echo } }
  - { name: strict_weather, effect: read_only, input_schema: '${schema}', builtin: { name: echo } }`);
  try {
    const call = (id: string, name: string) => ({ id, name, arguments: '{"unit":"Celsius","address":{"zip":"02134"}}' });
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [call('a', 'weather'), call('b', 'strict_weather')] });
    expect(results[0]!.isError).toBe(false);
    expect(JSON.parse(results[0]!.output)).toEqual({ unit: 'celsius', address: { zip: 2134 } });
    expect(results[1]!.isError).toBe(true);
    expect(results[1]!.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  } finally {
    await d.close();
  }
});
