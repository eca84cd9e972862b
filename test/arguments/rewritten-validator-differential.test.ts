import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { RE2 } from 're2-wasm';
import { createSchemaCompiler } from '../../src/registry';
import { ENUM_MODULE, inEnum } from '../../src/registry/linear-enum';
import { fillOwnDefaults, OWN_DEFAULTS_MODULE } from '../../src/registry/own-defaults';
import { createSchemaCodegen, PATTERN_MODULE } from '../../src/registry/schema-codegen';
import { loadSchemaModule } from '../../src/registry/schema-module';
import { wrapSchemaSource } from '../../src/registry/schema-rewrite';
import { uniqueIndexes, UNIQUE_ITEMS_MODULE } from '../../src/registry/unique-items';

// schema-module.ts rewrites Ajv's standalone code with regular expressions before loading it
// (concat -> appendErrors, push -> pushError, a tick at each loop and function head) and
// boundedValidate wraps it. Under the bounds (fewer than 100 errors, well under 1 s) the result
// must be exactly Ajv's. Two comparisons, on generated schemas and data:
//
//  1. REWRITTEN vs RAW: the same source (the app's codegen output) loaded twice, once through
//     loadSchemaModule (rewritten, bounded) and once as is, with the same own modules (RE2
//     patterns, linear enum and uniqueItems, own defaults). This isolates the rewriting and the
//     wrapper from every deliberate difference of the codegen: validity, the whole error objects
//     (verbose: schema, parentSchema and data too) and the data after useDefaults must be equal.
//  2. APP vs PLAIN AJV: a plain Ajv2020 (same options, ajv-formats), validating a deep copy.
//     Normalised, as the app differs on purpose (see schema-codegen.ts):
//     - uniqueItems is linear: it names the first duplicate pair, Ajv's loop the last; params and
//       message of uniqueItems errors are not compared;
//     - patterns run on RE2: the generated patterns are ones RE2 and JS agree on;
//     - enum and uniqueItems are keywords the app adds: their errors come after those of Ajv's own
//       keywords of the same schema, so errors are compared as sorted lists (the order is compared
//       exactly in 1.);
//     - enum is a linear lookup: word for word Ajv's, compared as is;
//     - own defaults, "__proto__" keys, draft upgrades: no generated name is a key of
//       Object.prototype nor "__proto__", and no schema names a $schema, so none applies;
//     - formats: only ajv-formats' ones (no url: the app's is linear, no unknown formats);
//     - schemas the app refuses (cost, ref loops, defaults not valid against their schema, $ref
//       to a missing $def) or plain Ajv refuses are skipped and counted, not compared.

/** Text Ajv's code holds, so a rewrite that looks inside string literals shows. */
const CODE = [
  'vErrors.push(err0);',
  'vErrors = vErrors === null ? validate0.errors : vErrors.concat(validate0.errors);',
  'for(let i0=0; i0<len0; i0++){',
  'for(const key0 of Object.keys(data)){',
  'function validate0(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){',
];
const NAMES = ['a', 'b', 'c', 'x1', ...CODE.slice(0, 4)];
const STRINGS = ['', 'a', 'ab', 'abc', 'x1', '2024-01-31', '2024-02-30', 'me@example.com', 'not an email', 'https://example.com/p?q=1', 'a b', '12:30:00Z', ...CODE];
const FORMATS = ['date', 'email', 'uri', 'time', 'ipv4', 'uuid', 'date-time'];
const PATTERNS = ['^a', 'b$', '^x\\d', '^$', 'a+b?'];

const scalar = fc.oneof(fc.constantFrom(...STRINGS), fc.constantFrom(0, 1, 2, -1, 1.5, 3, 10), fc.boolean(), fc.constant(null));
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...NAMES), tie('value'), { maxKeys: 3 }),
  ),
}));
const names = fc.subarray(NAMES, { maxLength: 3 });

type Schema = Record<string, unknown> | boolean;
const { schema } = fc.letrec<{ schema: Schema; keyword: [string, unknown][] }>((tie) => {
  const sub = tie('schema') as fc.Arbitrary<Schema>;
  const list = fc.array(sub, { minLength: 1, maxLength: 3 });
  const one = <T>(key: string, arb: fc.Arbitrary<T>) => arb.map((v): [string, unknown][] => [[key, v]]);
  return {
    schema: fc.oneof(
      { depthSize: 'small', withCrossShrink: true, maxDepth: 4 },
      fc.boolean(),
      tie('keyword').map((entries) => Object.fromEntries(entries as [string, unknown][])),
      fc.array(tie('keyword'), { minLength: 2, maxLength: 3 }).map((all) => Object.fromEntries((all as [string, unknown][][]).flat())),
    ),
    keyword: fc.oneof(
      one('type', fc.oneof(fc.constantFrom('object', 'array', 'string', 'number', 'integer', 'boolean', 'null'), fc.constantFrom(['string', 'number'], ['object', 'null']))),
      one('properties', fc.dictionary(fc.constantFrom(...NAMES), sub, { maxKeys: 3 })),
      one('required', names),
      one('additionalProperties', sub),
      one('patternProperties', fc.dictionary(fc.constantFrom(...PATTERNS), sub, { maxKeys: 2 })),
      one('propertyNames', fc.oneof(sub, fc.constantFrom({ maxLength: 2 }, { pattern: '^[a-c]' }, { enum: ['a', 'b'] }))),
      one('items', sub),
      one('prefixItems', list),
      fc.tuple(sub, fc.option(fc.nat(2)), fc.option(fc.integer({ min: 1, max: 3 }))).map(([contains, min, max]): [string, unknown][] => [['contains', contains], ...(min === null ? [] : [['minContains', min] as [string, unknown]]), ...(max === null ? [] : [['maxContains', max] as [string, unknown]])]),
      one('uniqueItems', fc.boolean()),
      one('enum', fc.array(value, { minLength: 1, maxLength: 3 })),
      one('const', value),
      one('anyOf', list),
      one('oneOf', list),
      one('allOf', list),
      one('not', sub),
      fc.tuple(sub, fc.option(sub), fc.option(sub)).map(([i, t, e]): [string, unknown][] => [['if', i], ...(t === null ? [] : [['then', t] as [string, unknown]]), ...(e === null ? [] : [['else', e] as [string, unknown]])]),
      one('dependentRequired', fc.dictionary(fc.constantFrom(...NAMES), names, { maxKeys: 2 })),
      one('dependentSchemas', fc.dictionary(fc.constantFrom(...NAMES), sub, { maxKeys: 2 })),
      one('unevaluatedProperties', sub),
      one('unevaluatedItems', sub),
      one('minimum', fc.constantFrom(0, 1, 1.5)),
      one('maximum', fc.constantFrom(0, 2, 10)),
      one('exclusiveMinimum', fc.constantFrom(0, 1)),
      one('exclusiveMaximum', fc.constantFrom(2, 10)),
      one('multipleOf', fc.constantFrom(1, 2, 0.5, 3)),
      one('minLength', fc.nat(3)),
      one('maxLength', fc.nat(3)),
      one('pattern', fc.constantFrom(...PATTERNS)),
      one('format', fc.constantFrom(...FORMATS)),
      one('minProperties', fc.nat(2)),
      one('maxProperties', fc.nat(2)),
      one('minItems', fc.nat(2)),
      one('maxItems', fc.nat(3)),
      one('default', value),
      one('$ref', fc.constantFrom('#', '#/$defs/d1', '#/$defs/d2')),
      one('$dynamicRef', fc.constant('#node')),
    ),
  };
});
/** A root: an object schema (booleans make no code worth comparing), with $defs and a $dynamicAnchor sometimes. */
const root = fc
  .tuple(schema, fc.option(fc.tuple(schema, schema)), fc.boolean())
  .map(([s, defs, anchor]) => ({ ...(typeof s === 'boolean' ? { not: { const: s } } : s), ...(defs ? { $defs: { d1: defs[0], d2: defs[1] } } : {}), ...(anchor ? { $dynamicAnchor: 'node' } : {}) }));

const re2s = new Map<string, RE2>();
const pattern = (source: string, flags: string) => {
  const all = flags.includes('u') ? flags : `${flags}u`;
  const key = `${all}/${source}`;
  const re = re2s.get(key) ?? new RE2(source, all);
  re2s.set(key, re);
  return re;
};
afterAll(() => {
  for (const re of re2s.values()) (re as unknown as { wrapper: { delete(): void } }).wrapper.delete();
});

/** The source loaded as is: Ajv's code, unrewritten, with the same modules the app gives it. */
function loadRaw(source: string): ValidateFunction {
  const own: Record<string, unknown> = { [PATTERN_MODULE]: pattern, [OWN_DEFAULTS_MODULE]: { fillOwnDefaults }, [UNIQUE_ITEMS_MODULE]: { uniqueIndexes }, [ENUM_MODULE]: { inEnum } };
  const load = (name: string) => (Object.hasOwn(own, name) ? own[name] : (require(name) as unknown));
  const module = { exports: {} as unknown };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- Ajv's code for a generated schema
  (new Function('require', 'module', 'exports', source) as (r: unknown, m: unknown, e: unknown) => void)(load, module, module.exports);
  return module.exports as ValidateFunction;
}

const codegen = createSchemaCodegen(256 * 1024);
const plainAjv = () => {
  const ajv = new Ajv2020({ allErrors: true, verbose: true, ownProperties: true, strict: false, useDefaults: true, logger: false });
  addFormats(ajv);
  return ajv;
};
/**
 * One plain Ajv for the generated schemas, emptied before each compile (`removeSchema()` drops
 * every schema but the meta-schemas, and the cache): it compiles as a new one does, without
 * compiling the draft 2020-12 meta-schemas again, which took most of this test's time.
 */
const sharedAjv = plainAjv();
const plainCompile = (schema: object): ValidateFunction => sharedAjv.removeSchema().compile(schema);
const copy = (data: unknown) => JSON.parse(JSON.stringify(data)) as unknown;
const run = (validate: ValidateFunction, data: unknown) => {
  const valid = validate(data);
  return { valid, errors: validate.errors ?? null };
};
/** The compared fields of errors, in an order of their own: enum and uniqueItems are keywords added to Ajv, so their errors come after the built-in keywords' of the same schema. */
const brief = (errors: readonly ErrorObject[] | null) =>
  (errors ?? [])
    .map(({ instancePath, schemaPath, keyword, params, message }) => JSON.stringify(keyword === 'uniqueItems' ? { instancePath, schemaPath, keyword } : { instancePath, schemaPath, keyword, params, message }))
    .sort();

const counts = { schemas: 0, appRefused: 0, plainRefused: 0, data: 0, compared: 0, invalid: 0 };

/** Checks one schema against several data, both comparisons; throws (via expect) on a divergence. */
function check(schemaValue: object, data: readonly unknown[]): void {
  const text = JSON.stringify(schemaValue);
  counts.schemas++;
  let source: string;
  try {
    source = codegen(text).source;
  } catch {
    counts.appRefused++;
    return;
  }
  let plain: ValidateFunction;
  try {
    plain = plainCompile(JSON.parse(text) as object);
  } catch {
    counts.plainRefused++;
    return;
  }
  const rewritten = loadSchemaModule(wrapSchemaSource(source), pattern).validate;
  const raw = loadRaw(source);
  for (const d of data) {
    counts.data++;
    const [a, b, c] = [copy(d), copy(d), copy(d)];
    const got = run(rewritten, a); // 3. it throws nothing (an exception fails the property)
    const want = run(raw, b);
    const ajv = run(plain, c);
    // 1. the rewriting and the wrapper change nothing: errors whole, data as filled
    expect({ valid: got.valid, errors: got.errors, data: a }).toEqual({ valid: want.valid, errors: want.errors, data: b });
    if ((got.errors?.length ?? 0) >= 100) continue;
    counts.compared++;
    if (!got.valid) counts.invalid++;
    // 2. as plain Ajv, normalised
    expect({ valid: got.valid, errors: brief(got.errors), data: a }).toEqual({ valid: ajv.valid, errors: brief(ajv.errors), data: c });
  }
}

test('the rewritten, bounded validator answers as Ajv for generated schemas and data', () => {
  fc.assert(
    fc.property(root, fc.array(value, { minLength: 1, maxLength: 4 }), (s, data) => check(s, data)),
    // DIFF_RUNS and DIFF_SEED run it longer, or elsewhere (1,500 runs take ~20 s).
    { numRuns: Number(process.env.DIFF_RUNS ?? 250), seed: Number(process.env.DIFF_SEED ?? 20261205) },
  );
  // The property is not vacuous: most schemas compile in both, and some data fail them.
  expect(counts.schemas).toBeGreaterThanOrEqual(250);
  expect(counts.compared).toBeGreaterThan(300);
  expect(counts.invalid).toBeGreaterThan(60);
  expect(counts.appRefused + counts.plainRefused).toBeLessThan(counts.schemas / 2);
  // eslint-disable-next-line no-console
  if (process.env.DIFF_COUNTS) console.log(counts);
});

// Regression: the rewrites looked inside string literals, where Ajv writes the schema's own text.
// A const or enum of such text was checked against the rewritten text, a default filled it, and a
// property named as a loop head was looked up under another name (so never checked). The concat
// rewrite predates 303e3db (4666aab); the push and loop-head rewrites came with 303e3db and 879caf5.
describe('text of Ajv code in a schema stays the schema text', () => {
  const compiler = createSchemaCompiler(256 * 1024);
  afterAll(() => compiler.close());
  const cases: [string, object, unknown, boolean][] = [
    ['const', { const: 'vErrors.push(err0);' }, 'vErrors.push(err0);', true],
    ['enum', { enum: ['vErrors = vErrors === null ? validate0.errors : vErrors.concat(validate0.errors);'] }, 'vErrors = vErrors === null ? validate0.errors : vErrors.concat(validate0.errors);', true],
    ['property name', { type: 'object', properties: { 'for(const key0 of Object.keys(data)){': { type: 'number' } } }, { 'for(const key0 of Object.keys(data)){': 'x' }, false],
    ['required', { required: ['for(let i0=0; i0<len0; i0++){'] }, { 'for(let i0=0; i0<len0; i0++){': 1 }, true],
    ['default', { type: 'object', properties: { a: { default: 'vErrors.push(err1);' } } }, {}, true],
  ];
  test.each(cases)('%s', (_, schemaValue, data, valid) => {
    const { validate } = compiler.compile(JSON.stringify(schemaValue));
    const [got, want] = [copy(data), copy(data)];
    expect(validate(got)).toBe(valid);
    expect(plainAjv().validate(schemaValue, want)).toBe(valid);
    expect(got).toEqual(want);
    if (!valid) expect(validate.errors).toMatchObject([{ keyword: 'type', instancePath: '/for(const key0 of Object.keys(data)){' }]);
    check(schemaValue, [data]);
  });

  test('literals are skipped whole: past a regular expression holding a quote, errors are still bounded', () => {
    // ajv-formats' uri-template expression, a regex literal in the code, holds `"` and `'`: taken
    // as the start of a string, it put the scan out of step, and the const's text was rewritten.
    const schemaValue = { type: 'object', properties: { c: { const: 'vErrors.push(err0);' }, t: { format: 'uri-template' }, xs: { items: { type: 'string' } } } };
    const { validate } = compiler.compile(JSON.stringify(schemaValue));
    expect(validate({ t: '{x}', c: 'vErrors.push(err0);' })).toBe(true);
    expect(validate({ t: '{x}', c: 'vErrors.push(err0);', xs: Array.from({ length: 150 }, (_, i) => i) })).toBe(false);
    expect(validate.errors).toHaveLength(150);
    expect(validate.errors![99]).toMatchObject({ instancePath: '/xs/99', keyword: 'type' });
    expect(validate.errors![100]!.keyword).toBe('notKept');
  });
});
