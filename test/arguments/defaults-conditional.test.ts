import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, type TestDispatch } from '../helpers/servers';

// Validation (Ajv, useDefaults) fills the defaults of the `then` or `else` that applies, of a
// `dependentSchemas` whose property is sent, of `patternProperties` and `unevaluatedProperties`;
// none under `if`, `anyOf`, `oneOf` or `not`. A lenient tool's warnings listed only those under
// properties, items, allOf and $ref: the others (and those through a `$dynamicRef` or inside a
// default object) reached the tool unnamed. And a call refused and then repaired kept what its
// refused validation filled: `{"kind":"Card"}` was validated as no card (the `else` filled
// `iban_check`), repaired to "card", and reached the tool with both the card's `cvc_check` and
// the `iban_check`, neither named. Now the defaults listed are those validation filled into the
// arguments the tool gets, and a repair starts from the arguments as sent. Noticed by an audit of
// issue 8.

const conditional = {
  type: 'object',
  properties: { kind: { enum: ['card', 'bank'] }, amount: { type: 'integer' } },
  if: { properties: { kind: { const: 'card' } }, required: ['kind'] },
  then: { properties: { cvc_check: { type: 'boolean', default: true } } },
  else: { properties: { iban_check: { type: 'boolean', default: false } } },
};
const others = {
  type: 'object',
  properties: {
    guarded: { type: 'object', if: { properties: { mode: { default: 'strict' } } }, then: {}, anyOf: [{ properties: { level: { default: 1 } } }, { type: 'object' }] },
    deps: { type: 'object', dependentSchemas: { card: { properties: { cvc: { type: 'string', default: 'none' } } } } },
    notes: { type: 'object', patternProperties: { '^x-': { type: 'object', properties: { lang: { type: 'string', default: 'en' } } } }, additionalProperties: { type: 'object', properties: { size: { type: 'integer', default: 10 } } } },
    extra: { type: 'object', properties: { a: { type: 'integer' } }, unevaluatedProperties: { type: 'object', properties: { on: { type: 'boolean', default: true } } } },
  },
};
const tree = {
  $id: 'https://example.com/tree',
  $dynamicAnchor: 'node',
  type: 'object',
  properties: { label: { type: 'string', default: 'n' }, kids: { type: 'array', items: { $dynamicRef: '#node' } }, opts: { type: 'object', default: {}, properties: { x: { type: 'integer', default: 1 } } } },
};

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(`
tools:
  - { name: pay, effect: read_only, lenient_arguments: true, input_schema: '${JSON.stringify(conditional)}', builtin: { name: echo } }
  - { name: strict_pay, effect: read_only, input_schema: '${JSON.stringify(conditional)}', builtin: { name: echo } }
  - { name: others, effect: read_only, lenient_arguments: true, input_schema: '${JSON.stringify(others)}', builtin: { name: echo } }
  - { name: tree, effect: read_only, lenient_arguments: true, input_schema: '${JSON.stringify(tree)}', builtin: { name: echo } }
`);
});
afterAll(async () => {
  await d.close();
});

let session = 0;
const call = async (name: string, args: string, mode = DispatchMode.SEQUENTIAL) => {
  const reply = await d.dispatch.dispatch({ sessionId: `conditional-${session++}`, mode, calls: [{ id: 'c', name, arguments: args }] });
  const result = reply.results[0]!;
  expect(result.isError).toBe(false);
  return { args: JSON.parse(result.output) as unknown, warnings: [...result.warnings] };
};

describe.each([
  ['sequential', DispatchMode.SEQUENTIAL],
  ['parallel', DispatchMode.PARALLEL],
])('%s', (_mode, mode) => {
  test("the default of the branch that applies is listed, the other branch's is neither filled nor listed", async () => {
    expect(await call('pay', '{"kind":"card"}', mode)).toEqual({ args: { kind: 'card', cvc_check: true }, warnings: ['applied default /cvc_check: true'] });
    expect(await call('pay', '{"kind":"bank"}', mode)).toEqual({ args: { kind: 'bank', iban_check: false }, warnings: ['applied default /iban_check: false'] });
    expect(await call('pay', '{}', mode)).toEqual({ args: { iban_check: false }, warnings: ['applied default /iban_check: false'] });
  });

  test('a repair that changes which branch applies: the tool gets the defaults of the branch the repaired call takes, and only those', async () => {
    const { args, warnings } = await call('pay', '{"kind":"Card","amount":"5"}', mode);
    // Before: {"kind":"card","amount":5,"iban_check":false,"cvc_check":true}, with the two repairs alone listed.
    expect(args).toEqual({ kind: 'card', amount: 5, cvc_check: true });
    expect(warnings).toEqual(['repaired /kind: "Card" -> "card" (enum value corrected)', 'repaired /amount: "5" -> 5 (string to number)', 'applied default /cvc_check: true']);
  });
});

test('a default under if, anyOf or an absent dependentSchemas property is not filled, and not listed', async () => {
  expect(await call('others', '{"guarded":{},"deps":{}}')).toEqual({ args: { guarded: {}, deps: {} }, warnings: [] });
});

test('defaults filled under dependentSchemas, patternProperties, additionalProperties beside them, and unevaluatedProperties are listed', async () => {
  const { args, warnings } = await call('others', '{"deps":{"card":"4242"},"notes":{"x-a":{},"b":{}},"extra":{"a":1,"z":{}}}');
  expect(args).toEqual({ deps: { card: '4242', cvc: 'none' }, notes: { 'x-a': { lang: 'en' }, b: { size: 10 } }, extra: { a: 1, z: { on: true } } });
  expect(warnings.sort()).toEqual(['applied default /deps/cvc: "none"', 'applied default /extra/z/on: true', 'applied default /notes/b/size: 10', 'applied default /notes/x-a/lang: "en"']);
});

test('defaults reached through a $dynamicRef are listed, and a default object is listed as the tool gets it (with the defaults filled inside it)', async () => {
  const { args, warnings } = await call('tree', '{"kids":[{"opts":{}}]}');
  expect(args).toEqual({ label: 'n', opts: { x: 1 }, kids: [{ label: 'n', opts: { x: 1 } }] });
  // Before: /label and /opts: {} alone.
  expect(warnings.sort()).toEqual(['applied default /kids/0/label: "n"', 'applied default /kids/0/opts/x: 1', 'applied default /label: "n"', 'applied default /opts: {"x":1}']);
});

test('a tool that is not lenient is unchanged: the defaults are filled, with no warning', async () => {
  expect(await call('strict_pay', '{"kind":"card"}')).toEqual({ args: { kind: 'card', cvc_check: true }, warnings: [] });
});
