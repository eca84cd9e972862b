import { createSchemaCompiler } from '../../src/registry/schema-compiler';
import { MAX_SUBSCHEMAS_PER_VALUE } from '../../src/registry/schema-cost';

// A schema whose subschemas multiply at one value (a chain of $defs, each a oneOf of two $refs to
// the next) made one call's validation take 2^levels steps on the event loop: 21 levels (1.4 KB)
// stalled every tenant 5.8 s (found in review). Such schemas, and $ref loops that stay at one
// value, are refused when compiled.

const compile = (schema: object) => createSchemaCompiler(1 << 20).compile(JSON.stringify(schema));
const tooCostly = (pointer: string) =>
  `input_schema does not compile: #${pointer} applies more than 10000 subschemas to one value ` +
  '(allOf, anyOf, oneOf, not, if/then/else, dependentSchemas and $ref add up, and multiply through $ref): validating a call could take exponential time';
const tooCostlyBelow = (pointer: string, levels: number) =>
  `input_schema does not compile: #${pointer} applies more than 10000 subschemas to one value ${levels} levels below the value it validates ` +
  '(properties, patternProperties, additionalProperties, unevaluatedProperties, propertyNames, prefixItems, items, contains and unevaluatedItems reaching the same part of a value add up, ' +
  'and multiply through $ref): validating a call could take exponential time';
const loops = (from: string, to: string) =>
  `input_schema does not compile: #${from} leads back to #${to} at the same place in the arguments ` +
  '(through allOf, anyOf, oneOf, not, if/then/else, dependentSchemas or $ref, never reaching a property or item): validating would never end';

/** Each level applies `level(next)` to the value, `next` being a reference to the next level. */
function chain(levels: number, level: (next: string, i: number) => object, last: object = { type: 'string' }): object {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) defs[`l${i}`] = level(`#/$defs/l${i + 1}`, i);
  defs[`l${levels}`] = last;
  return { type: 'object', properties: { a: { $ref: '#/$defs/l0' } }, $defs: defs };
}

test('the bound is 10,000', () => expect(MAX_SUBSCHEMAS_PER_VALUE).toBe(10_000));

test('a chain of oneOf or anyOf of two $refs is refused at 12 levels, naming the level that passes the bound; 11 levels compile', () => {
  for (const keyword of ['oneOf', 'anyOf']) {
    const level = (next: string) => ({ [keyword]: [{ $ref: next }, { $ref: next }] });
    // Level i applies 2^(n+2) - 3 subschemas, n levels above the last: 16,381 at n = 12.
    expect(() => compile(chain(21, level))).toThrow(tooCostly('/$defs/l9'));
    expect(() => compile(chain(12, level))).toThrow(tooCostly('/$defs/l0'));
    expect(compile(chain(11, level)).validate({ a: 1 })).toBe(false);
  }
});

test('at one value, subschemas up to the bound compile and one more is refused', () => {
  expect(() => compile({ allOf: Array.from({ length: MAX_SUBSCHEMAS_PER_VALUE - 1 }, () => true) })).not.toThrow();
  expect(() => compile({ allOf: Array.from({ length: MAX_SUBSCHEMAS_PER_VALUE }, () => true) })).toThrow(tooCostly(''));
});

test('every applicator at the value counts: not, if/then/else, dependentSchemas, allOf', () => {
  const levels = 9;
  expect(() => compile(chain(levels, (next) => ({ if: { $ref: next }, then: { $ref: next }, else: { $ref: next } })))).toThrow(/applies more than 10000 subschemas/);
  expect(() => compile(chain(levels, (next) => ({ dependentSchemas: { x: { $ref: next }, y: { $ref: next }, z: { not: { $ref: next } } } })))).toThrow(/applies more than 10000 subschemas/);
  expect(() => compile(chain(13, (next) => ({ allOf: [{ $ref: next }, { $ref: next }] })))).toThrow(/applies more than 10000 subschemas/);
});

test('references by anchor, by embedded $id and by $dynamicRef are followed', () => {
  const byAnchor = chain(21, (_, i) => ({ $anchor: `a${i}`, oneOf: [{ $ref: `#a${i + 1}` }, { $ref: `#a${i + 1}` }] }), { $anchor: 'a21', type: 'string' });
  expect(() => compile(byAnchor)).toThrow(/applies more than 10000 subschemas/);
  const byId = chain(21, (_, i) => ({ $id: `https://tools.example/l${i}`, anyOf: [{ $ref: `l${i + 1}` }, { $ref: `l${i + 1}` }] }), { $id: 'https://tools.example/l21', type: 'string' });
  expect(() => compile({ $id: 'https://tools.example/root', ...byId })).toThrow(/applies more than 10000 subschemas/);
  const dynamic = chain(21, (_, i) => ({ $dynamicAnchor: `d${i}`, oneOf: [{ $dynamicRef: `#d${i + 1}` }, { $dynamicRef: `#d${i + 1}` }] }), { $dynamicAnchor: 'd21', type: 'string' });
  // A $dynamicRef whose anchor is not in the value's dynamic scope runs the enclosing schema again.
  expect(() => compile(dynamic)).toThrow(/leads back to #\/\$defs\/l20 at the same place/);
});

test('a $ref loop that stays at one value is refused; to itself, or through anyOf and allOf', () => {
  expect(() => compile({ properties: { x: { $ref: '#/$defs/a' } }, $defs: { a: { anyOf: [{ $ref: '#/$defs/a' }] } } })).toThrow(loops('/$defs/a/anyOf/0', '/$defs/a'));
  const schema = { type: 'object', properties: { x: { $ref: '#/$defs/a' } }, $defs: { a: { anyOf: [{ $ref: '#/$defs/b' }, { type: 'string' }] }, b: { allOf: [{ $ref: '#/$defs/a' }] } } };
  expect(() => compile(schema)).toThrow(loops('/$defs/b/allOf/0', '/$defs/a'));
});

test('a $dynamicRef that descends into the value compiles', () => {
  const { validate } = compile({ $dynamicAnchor: 'node', type: 'object', properties: { kids: { type: 'array', items: { $dynamicRef: '#node' } } } });
  expect(validate({ kids: [{ kids: [] }] })).toBe(true);
  expect(validate({ kids: [1] })).toBe(false);
});

test('recursive schemas that descend into properties or items (trees) compile and validate', () => {
  const tree = {
    $ref: '#/$defs/node',
    $defs: { node: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } }, only: { $ref: '#/$defs/node/properties/children' } } } },
  };
  const { validate } = compile(tree);
  let deep: unknown = { name: 'leaf' };
  for (let i = 0; i < 20; i++) deep = { name: `n${i}`, children: [deep, { name: 'x' }] };
  expect(validate(deep)).toBe(true);
  expect(validate({ name: 'root', children: [{ children: [] }] })).toBe(false);
});

test('the count is made once per subschema: 5,000 properties sharing a union of 20 variants compile quickly', () => {
  const variants = Array.from({ length: 20 }, (_, i) => ({ $ref: `#/$defs/v${i}` }));
  const defs = Object.fromEntries(variants.map((_, i) => [`v${i}`, { type: 'object', properties: { kind: { const: i } } }]));
  const properties = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`p${i}`, { $ref: '#/$defs/union' }]));
  const started = Date.now();
  compile({ type: 'object', properties, $defs: { union: { anyOf: variants }, ...defs } });
  expect(Date.now() - started).toBeLessThan(10_000);
});

test('a $ref the schema cannot resolve is still refused by Ajv, word for word', () => {
  expect(() => compile({ $ref: '#/$defs/missing' })).toThrow(/^input_schema does not compile: can't resolve reference #\/\$defs\/missing/);
});

// Found in review of a681469: two subschemas reaching the same part of the value inside a recursive
// $ref doubled Ajv's work per level of the arguments (2.8 s for {"a":{"a":...}} 20 deep), and data
// (const, enum, default, examples) and the 2020-12 $dynamicRef recursion were refused as schemas.

/** `{"a":{"a":...}}` or `[[...]]`, `levels` deep. */
const nested = (levels: number, array: boolean) => {
  let value: unknown = array ? [] : {};
  for (let i = 0; i < levels; i++) value = array ? [value] : { a: value };
  return value;
};

test('two subschemas reaching the same property or item of a recursive $ref are refused, naming where the count passes the bound', () => {
  const patterns = { $ref: '#/$defs/n', $defs: { n: { type: 'object', properties: { a: { $ref: '#/$defs/n' } }, patternProperties: { '^a$': { $ref: '#/$defs/n' } } } } };
  expect(() => compile(patterns)).toThrow(tooCostlyBelow('/$defs/n', 13));
  const items = { $ref: '#/$defs/n', $defs: { n: { type: 'array', items: { $ref: '#/$defs/n' }, contains: { $ref: '#/$defs/n' } } } };
  expect(() => compile(items)).toThrow(tooCostlyBelow('/$defs/n', 13));
  const twice = { $defs: { n: { allOf: [{ properties: { a: { $ref: '#/$defs/n' } } }, { properties: { a: { $ref: '#/$defs/n' } } }] } }, $ref: '#/$defs/n' };
  expect(() => compile(twice)).toThrow(tooCostlyBelow('/$defs/n', 12));
  const prefixAndUnevaluated = { $defs: { n: { type: 'array', prefixItems: [{ $ref: '#/$defs/n' }], unevaluatedItems: { $ref: '#/$defs/n' } } }, $ref: '#/$defs/n' };
  expect(() => compile(prefixAndUnevaluated)).toThrow(tooCostlyBelow('/$defs/n', 13));
});

test('subschemas reaching different parts, or alternatives (properties or additionalProperties), stay linear and validate', () => {
  const alternatives = { $ref: '#/$defs/n', $defs: { n: { type: 'object', properties: { a: { $ref: '#/$defs/n' } }, additionalProperties: { $ref: '#/$defs/n' } } } };
  expect(compile(alternatives).validate(nested(60, false))).toBe(true);
  const prefix = { $ref: '#/$defs/n', $defs: { n: { type: 'array', prefixItems: [{ $ref: '#/$defs/n' }], items: { $ref: '#/$defs/n' }, contains: { type: 'array' }, minContains: 0 } } };
  const { validate } = compile(prefix);
  expect(validate(nested(60, true))).toBe(true);
  expect(validate([[1]])).toBe(false);
});

test('generator output compiles and validates: many $defs, anyOf with null, nested $refs, a recursive union of node kinds', () => {
  const ref = (name: string) => ({ $ref: `#/$defs/${name}` });
  const optional = (name: string) => ({ anyOf: [ref(name), { type: 'null' }], default: null });
  const defs: Record<string, unknown> = {
    Address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } }, required: ['city'] },
    Person: { type: 'object', properties: { name: { type: 'string' }, home: optional('Address'), work: optional('Address'), manager: optional('Person'), reports: { type: 'array', items: ref('Person') } } },
    Expr: { anyOf: ['Binary', 'Neg', 'Call', 'Num'].map(ref) },
    Binary: { type: 'object', properties: { kind: { const: 'Binary' }, op: { enum: ['+', '-', '*', '/'] }, left: ref('Expr'), right: ref('Expr') }, required: ['kind', 'op', 'left', 'right'] },
    Neg: { type: 'object', properties: { kind: { const: 'Neg' }, operand: ref('Expr') }, required: ['kind', 'operand'] },
    Call: { type: 'object', properties: { kind: { const: 'Call' }, args: { type: 'array', items: ref('Expr') } }, required: ['kind', 'args'] },
    Num: { type: 'object', properties: { kind: { const: 'Num' }, value: { type: 'number' } }, required: ['kind', 'value'] },
  };
  const { validate } = compile({ type: 'object', properties: { person: ref('Person'), expr: ref('Expr') }, $defs: defs });
  let expr: unknown = { kind: 'Num', value: 1 };
  for (let i = 0; i < 30; i++) expr = { kind: 'Binary', op: '+', left: i % 2 ? expr : { kind: 'Num', value: i }, right: { kind: 'Neg', operand: { kind: 'Call', args: i % 2 ? [] : [expr] } } };
  const started = Date.now();
  expect(validate({ person: { name: 'a', home: null, manager: { name: 'b', reports: [{ home: { city: 'x' } }] } }, expr })).toBe(true);
  expect(Date.now() - started).toBeLessThan(1_000);
  expect(validate({ person: { manager: { home: { street: 's' } } } })).toBe(false);
});

test('a union whose variants share a recursive property is refused: with allErrors Ajv tries every variant at every level', () => {
  // Four variants each with left and right: Expr applied 4 times per level (Ajv alone: 0.78 s at 9 levels).
  const ref = (name: string) => ({ $ref: `#/$defs/${name}` });
  const kinds = ['Add', 'Sub', 'Mul', 'Div'];
  const defs: Record<string, unknown> = { Expr: { anyOf: [...kinds, 'Num'].map(ref) }, Num: { type: 'number' } };
  for (const kind of kinds) defs[kind] = { type: 'object', properties: { kind: { const: kind }, left: ref('Expr'), right: ref('Expr') } };
  expect(() => compile({ $ref: '#/$defs/Expr', $defs: defs })).toThrow(tooCostlyBelow('/$defs/Expr', 5));
});

test('const, enum, default and examples hold data: a $ref or a loop in them is not followed', () => {
  const examples = compile({ type: 'object', properties: { schema: { type: 'object', examples: [{ $ref: '#/$defs/Address' }] } } });
  expect(examples.validate({ schema: {} })).toBe(true);
  expect(examples.validate({ schema: 1 })).toBe(false);
  const byDefault = compile({ type: 'object', properties: { doc: { type: 'object', default: { $ref: 'other.json#/x' } } } });
  const filled: Record<string, unknown> = {};
  expect(byDefault.validate(filled)).toBe(true);
  expect(filled).toEqual({ doc: { $ref: 'other.json#/x' } });
  const constant = compile({ type: 'object', properties: { q: { const: { not: { $ref: '#/properties/q/const' } } }, e: { enum: [{ allOf: [{ $ref: '#' }] }] } } });
  expect(constant.validate({ q: { not: { $ref: '#/properties/q/const' } } })).toBe(true);
  expect(constant.validate({ q: { not: {} } })).toBe(false);
  const dsl = compile({ $ref: '#/$defs/F', $defs: { F: { type: 'object', properties: { and: { type: 'array', items: { $ref: '#/$defs/F' } }, not: { $ref: '#/$defs/F' } } } } });
  expect(dsl.validate({ and: [{ not: { and: [] } }] })).toBe(true);
  expect(dsl.validate({ not: { and: 1 } })).toBe(false);
});

test('a $dynamicRef runs its dynamic anchors or the enclosing function, not every enclosing schema: the 2020-12 recursion compiles and validates', () => {
  const tree = compile({ $dynamicAnchor: 'node', type: 'object', additionalProperties: { anyOf: [{ type: 'string' }, { $dynamicRef: '#node' }] } });
  expect(tree.validate({ a: 'x', b: { c: { d: 'y' } } })).toBe(true);
  expect(tree.validate({ a: { b: 1 } })).toBe(false);
  const withId = compile({ $id: 'https://example.com/tree', $dynamicAnchor: 'node', type: 'object', properties: { children: { type: 'array', items: { oneOf: [{ type: 'null' }, { $dynamicRef: '#node' }] } } } });
  expect(withId.validate({ children: [null, { children: [{ children: [] }] }] })).toBe(true);
  expect(withId.validate({ children: [{ children: [1] }] })).toBe(false);
  // No anchor of the name: Ajv runs the root again, at the property x's value.
  const none = compile({ type: 'object', properties: { x: { anyOf: [{ $dynamicRef: '#none' }] } } });
  expect(none.validate({ x: { x: {} } })).toBe(true);
  expect(none.validate({ x: { x: 1 } })).toBe(false);
});
