import { repairArguments } from '../../src/arguments';
import { startApp } from '../helpers/servers';

// pydantic writes an optional field as a union with null: `Optional[int]` is
// {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}, and an optional model or
// enum {"anyOf": [{"$ref": "#/$defs/M"}, {"type": "null"}]}. A lenient tool repaired nothing
// under such a union ("7" stayed a string, and the call was refused), where the same field
// without Optional was repaired: the union's one branch other than null is what a value other
// than null must fit, so it is repaired as that branch says.

const optional = (branch: object) => ({ anyOf: [branch, { type: 'null' }], default: null, title: 'X' });

test.each([
  ['an integer', optional({ type: 'integer' }), '7', 7],
  ['a number', optional({ type: 'number' }), ' 2.5 ', 2.5],
  ['a boolean', optional({ type: 'boolean' }), 'True', true],
  ['an array (a bare value wrapped)', optional({ type: 'array', items: { type: 'string' } }), 'a', ['a']],
  ['an array of integers (the items repaired too)', optional({ type: 'array', items: { type: 'integer' } }), ['1', '2'], [1, 2]],
  ['an enum through a $ref', { anyOf: [{ $ref: '#/$defs/Color' }, { type: 'null' }] }, 'Red', 'red'],
  ['a model through a $ref', { anyOf: [{ $ref: '#/$defs/Point' }, { type: 'null' }] }, '{"x":"1"}', { x: 1 }],
  ['null written {"const": null}, with oneOf', { oneOf: [{ type: 'integer' }, { const: null }] }, '3', 3],
])('%s under an Optional union is repaired', (_what, field, sent, expected) => {
  const schema = {
    type: 'object',
    properties: { field },
    $defs: { Color: { enum: ['red', 'green'] }, Point: { type: 'object', properties: { x: { type: 'integer' } } } },
  };
  const out = repairArguments({ field: sent }, schema);
  expect(out.value).toEqual({ field: expected });
  expect(out.repairs.length).toBeGreaterThan(0);
  expect(out.refused).toEqual([]);
});

test.each([
  ['null itself', optional({ type: 'integer' }), null],
  ['a union of two types and null (which one is meant is not known)', { anyOf: [{ type: 'integer' }, { type: 'boolean' }, { type: 'null' }] }, 'true'],
  ['a union without null', { anyOf: [{ type: 'integer' }, { type: 'string', pattern: '^x' }] }, '7'],
  ['a union beside a type of its own', { type: 'string', anyOf: [{ maxLength: 3 }, { type: 'null' }] }, 'abcd'],
])('%s is left as it is', (_what, field, sent) => {
  const out = repairArguments({ field: sent }, { type: 'object', properties: { field } });
  expect(out.value).toEqual({ field: sent });
  expect(out.repairs).toEqual([]);
});

test('through Dispatch on a lenient tool: a pydantic Optional[int] field sent as "7" reaches the tool as 7, with the repair in warnings', async () => {
  const schema = JSON.stringify({ type: 'object', properties: { limit: optional({ type: 'integer' }), q: { type: 'string' } }, required: ['q'] });
  const d = await startApp(`tools:\n  - { name: search, effect: read_only, lenient_arguments: true, input_schema: '${schema}', builtin: { name: echo } }`);
  try {
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'search', arguments: '{"q":"tea","limit":"7"}' }] });
    expect(results[0]!.isError).toBe(false);
    expect(JSON.parse(results[0]!.output)).toEqual({ q: 'tea', limit: 7 });
    expect(results[0]!.warnings).toContain('repaired /limit: "7" -> 7 (string to number)');
  } finally {
    await d.close();
  }
});
