import { repairArguments } from '../../src/arguments';
import { startApp, type TestDispatch } from '../helpers/servers';

// A map is an object whose members are named by the model: its values are read by
// `additionalProperties` or `patternProperties`, not by `properties` (pydantic's `dict[str, int]`,
// zod's `z.record(z.number().int())`). Lenient repair read `properties` alone, so
// `{"counts": {"a": "7"}}` was refused where `{"a": "7"}` under `properties` was repaired. A
// member's value is repaired now when exactly one subschema says what it must be: the one pattern
// its name matches (on the RE2 validation uses), or `additionalProperties` when it matches none.
// Noticed by an audit of issue 8.

const counts = (map: object) => ({ type: 'object', properties: { counts: { type: 'object', ...map } } });

test.each([
  ['additionalProperties', counts({ additionalProperties: { type: 'integer' } })],
  ['patternProperties', counts({ patternProperties: { '^[a-z]+$': { type: 'integer' } } })],
  ['patternProperties beside additionalProperties: false', counts({ patternProperties: { '^[a-z]+$': { type: 'integer' } }, additionalProperties: false })],
])('a value of a map under %s is repaired as one under properties is', (_what, schema) => {
  const out = repairArguments({ counts: { a: '7', b: 2 } }, schema);
  expect(out).toEqual({ value: { counts: { a: 7, b: 2 } }, repairs: ['repaired /counts/a: "7" -> 7 (string to number)'], refused: [] });
});

test('each repair a map takes: boolean, a bare value wrapped, an enum corrected, JSON text decoded, and a field of a value reached through a $ref', () => {
  const schema = {
    type: 'object',
    properties: {
      flags: { type: 'object', additionalProperties: { type: 'boolean' } },
      tags: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
      modes: { type: 'object', additionalProperties: { enum: ['fast', 'thorough'] } },
      lines: { type: 'object', additionalProperties: { $ref: '#/$defs/Line' } },
    },
    $defs: { Line: { type: 'object', properties: { qty: { type: 'integer' } } } },
  };
  const out = repairArguments({ flags: { x: 'TRUE' }, tags: { x: 'red' }, modes: { x: 'Fast' }, lines: { a1: { qty: '2' }, b2: '{"qty":"3"}' } }, schema);
  expect(out.value).toEqual({ flags: { x: true }, tags: { x: ['red'] }, modes: { x: 'fast' }, lines: { a1: { qty: 2 }, b2: { qty: 3 } } });
  expect(out.repairs).toHaveLength(6);
});

test('a map at the root of the schema, and one beside properties: a declared field is read by its own schema, the others by the map', () => {
  const schema = { type: 'object', properties: { id: { type: 'string' } }, additionalProperties: { type: 'integer' } };
  expect(repairArguments({ id: '7', n: '7' }, schema).value).toEqual({ id: '7', n: 7 });
});

test('a name matching no pattern falls to additionalProperties; one matching none, without it, is left as sent', () => {
  const schema = counts({ patternProperties: { '^n_': { type: 'integer' } }, additionalProperties: { type: 'boolean' } });
  expect(repairArguments({ counts: { n_a: '1', flag: 'true' } }, schema).value).toEqual({ counts: { n_a: 1, flag: true } });
  // "7" fits a name no pattern matches (any value does): repairing it would change a value sent right.
  const open = counts({ patternProperties: { '^n_': { type: 'integer' } } });
  expect(repairArguments({ counts: { n_a: '1', other: '7' } }, open).value).toEqual({ counts: { n_a: 1, other: '7' } });
});

test.each([
  ['a name two patterns match (both apply)', counts({ patternProperties: { '^a': { type: 'integer' }, 'b$': { type: 'number' } } }), { ab: '7' }],
  ['a union of two types (which one is meant is not known)', counts({ additionalProperties: { anyOf: [{ type: 'integer' }, { type: 'boolean' }] } }), { a: 'true' }],
  ['null (a member sent as null may say "remove it"; it is not dropped)', counts({ additionalProperties: { type: 'integer' } }), { a: null }],
  ['a map of any value (additionalProperties: true)', counts({ additionalProperties: true }), { a: '7' }],
])('%s is left as it is', (_what, schema, sent) => {
  const out = repairArguments({ counts: sent }, schema);
  expect(out.value).toEqual({ counts: sent });
  expect(out.repairs).toEqual([]);
});

test('a name is matched on RE2, as validation matches it: a pattern that backtracks exponentially on a JavaScript RegExp costs nothing', () => {
  const schema = counts({ patternProperties: { '^(a+)+$': { type: 'integer' } } });
  const hostile = `${'a'.repeat(26)}!`; // ~5 s on a RegExp
  const started = performance.now();
  const out = repairArguments({ counts: { aa: '1', [hostile]: '2' } }, schema);
  expect(performance.now() - started).toBeLessThan(1_000);
  expect(out.value).toEqual({ counts: { aa: 1, [hostile]: '2' } });
});

test("a map's members share the call's budget of enum comparisons: 2,000 misspelt values against 100 allowed ones stop at 100,000", () => {
  const allowed = Array.from({ length: 100 }, (_, i) => `mode_${String.fromCharCode(97 + (i % 26))}${i}`);
  const sent = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, `zz${i}`]));
  const out = repairArguments({ counts: sent }, counts({ additionalProperties: { enum: allowed } }));
  expect(out.value).toEqual({ counts: sent });
  expect(out.refused).toEqual(['enum values past 100000 comparisons with allowed values were not checked for misspellings']);
});

describe('through Dispatch', () => {
  let d: TestDispatch;
  const schema = JSON.stringify(counts({ additionalProperties: { type: 'integer' } }));
  beforeAll(async () => {
    d = await startApp(`
tools:
  - { name: tally, effect: read_only, lenient_arguments: true, input_schema: '${schema}', builtin: { name: echo } }
  - { name: strict_tally, effect: read_only, input_schema: '${schema}', builtin: { name: echo } }
`);
  });
  afterAll(async () => {
    await d.close();
  });
  const call = (name: string, args: string) => d.dispatch.dispatch({ sessionId: `map-${name}`, calls: [{ id: 'c', name, arguments: args }] }).then((r) => r.results[0]!);

  test('a lenient tool gets a map value sent as "7" as 7, the repair in warnings', async () => {
    const result = await call('tally', '{"counts":{"a":"7","b":2}}');
    // Before: INVALID_ARGUMENTS "/counts/a: got "7" (string); must be integer".
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.output)).toEqual({ counts: { a: 7, b: 2 } });
    expect(result.warnings).toEqual(['repaired /counts/a: "7" -> 7 (string to number)']);
  });

  test('a tool that is not lenient refuses it, as before', async () => {
    const result = await call('strict_tally', '{"counts":{"a":"7"}}');
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.output)).toMatchObject({ kind: 'INVALID_ARGUMENTS', message: 'invalid arguments: /counts/a: got "7" (string); must be integer; expected {"type":"integer"}; the tool was not executed' });
  });
});
