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
  expect(() => compile({ properties: { x: { anyOf: [{ $dynamicRef: '#none' }] } } })).toThrow(loops('/properties/x/anyOf/0', '/properties/x'));
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
