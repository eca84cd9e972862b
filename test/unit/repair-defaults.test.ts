import { prepareArguments } from '../../src/arguments';
import type { ResolvedTool } from '../../src/registry';
import { createSchemaCompiler } from '../../src/registry/schema-compiler';

// Every default a lenient tool's arguments get is listed, those a repair leaves to fill included
// (found in review: `{"limit":null}` became `{"limit":10}` with only "null dropped" listed).

const lenientTool = (schema: object, readOnly = true): ResolvedTool => {
  const { schema: compiled, validate } = createSchemaCompiler(1 << 20).compile(JSON.stringify(schema));
  return { name: 't', spec: { lenientArguments: true }, schema: compiled, validate, readOnly } as unknown as ResolvedTool;
};
const limits = { maxArgumentBytes: 1 << 20, maxArgumentDepth: 64 };

test('a default filled in after a null is dropped, for a read-only tool', () => {
  const tool = lenientTool({ type: 'object', properties: { limit: { type: 'integer', default: 10 } } });
  expect(prepareArguments(tool, '{"limit":null}', limits)).toEqual({
    args: { limit: 10 },
    warnings: ['repaired /limit: null dropped (optional field)', 'applied default /limit: 10'],
  });
});

test('for a side-effecting tool, a null for a field with a default is not dropped for the default to take its place', () => {
  // `{"notify":null}` became `notify: true`; a model writing null may have meant "no".
  const tool = lenientTool({ type: 'object', properties: { limit: { type: 'integer', default: 10 }, note: { type: 'string' } } }, false);
  expect(() => prepareArguments(tool, '{"limit":null,"note":null}', limits)).toThrow(
    '; /limit: null not dropped, as the default 10 would take its place (send the value meant, or leave the field out); the tool was not executed',
  );
  expect(prepareArguments(tool, '{"note":null}', limits)).toEqual({
    args: { limit: 10 },
    warnings: ['repaired /note: null dropped (optional field)', 'applied default /limit: 10'],
  });
});

test('defaults inside an object decoded from JSON text, beside those of the call as sent, each once', () => {
  const tool = lenientTool({
    type: 'object',
    properties: { filter: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', default: 1 } } }, units: { type: 'string', default: 'metric' } },
  });
  expect(prepareArguments(tool, '{"filter":"{\\"city\\":\\"Oslo\\"}"}', limits)).toEqual({
    args: { filter: { city: 'Oslo', days: 1 }, units: 'metric' },
    warnings: ['repaired /filter: "{\\"city\\":\\"Oslo\\"}" -> {"city":"Oslo"} (JSON text decoded)', 'applied default /units: "metric"', 'applied default /filter/days: 1'],
  });
});

test('for a side-effecting tool, a null the schema allows is kept as null, whatever the default', () => {
  // Checked after the refusal above: only a null the schema refuses is dropped or refused.
  const tool = lenientTool(
    {
      type: 'object',
      properties: {
        count: { type: 'integer' },
        note: { type: ['string', 'null'], default: 'n/a' },
        coupon: { anyOf: [{ type: 'string' }, { type: 'null' }], default: '' },
        tier: { enum: ['gold', null], default: 'gold' },
        filter: { type: 'object', properties: { city: { type: ['string', 'null'], default: 'Oslo' } } },
      },
    },
    false,
  );
  expect(prepareArguments(tool, '{"count":"2","note":null,"coupon":null,"tier":null,"filter":{"city":null}}', limits)).toEqual({
    args: { count: 2, note: null, coupon: null, tier: null, filter: { city: null } },
    warnings: ['repaired /count: "2" -> 2 (string to number)'],
  });
});
