import { createSchemaCompiler } from '../../src/registry/schema-compiler';

// A $ref chain that comes back to a schema of its own is refused before Ajv compiles: Ajv follows
// a $ref to a schema that is only a $ref while compiling, and such a loop overflowed its stack.

const compiler = createSchemaCompiler(1 << 20);
const compile = (schema: object) => () => compiler.compile(JSON.stringify(schema));
/** The error with exactly this message (toThrow compares an Error's message whole). */
const loop = (pointers: string) =>
  new Error(`input_schema does not compile: the $ref chain ${pointers} comes back where it started: each passes the same value on to the next, so validating would never end`);

test('a schema that is only a $ref to itself, reached from a property', () => {
  expect(compile({ properties: { p: { $ref: '#/$defs/a' } }, $defs: { a: { $ref: '#/$defs/a' } } })).toThrow(loop('#/$defs/a -> #/$defs/a'));
});

test('the loop is named without the $refs leading into it, through pointers, anchors and $ids', () => {
  expect(compile({ $ref: '#/$defs/a', $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a', description: 'b' } } })).toThrow(loop('#/$defs/a -> #/$defs/b -> #/$defs/a'));
  expect(compile({ $ref: '#x', $defs: { a: { $anchor: 'x', $ref: '#y' }, b: { $anchor: 'y', $ref: '#x' } } })).toThrow(loop('#/$defs/a -> #/$defs/b -> #/$defs/a'));
  expect(compile({ $ref: 'https://tools.example/a', $defs: { a: { $id: 'https://tools.example/a', $ref: 'a' } } })).toThrow(loop('#/$defs/a -> #/$defs/a'));
  expect(compile({ $ref: '#' })).toThrow(loop('# -> #'));
});

test('a long loop names its first five schemas and how many there are', () => {
  const $defs = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`d${i}`, { $ref: `#/$defs/d${(i + 1) % 7}` }]));
  expect(compile({ $ref: '#/$defs/d0', $defs })).toThrow(loop('#/$defs/d0 -> #/$defs/d1 -> #/$defs/d2 -> #/$defs/d3 -> #/$defs/d4 -> ... (7 in all) -> #/$defs/d0'));
});

test('chains that end, and recursion through a property, compile', () => {
  const { validate } = compiler.compile(JSON.stringify({ $ref: '#/$defs/a', $defs: { a: { $ref: '#/$defs/b' }, b: { type: 'object', properties: { next: { $ref: '#/$defs/a' } } } } }));
  expect(validate({ next: { next: {} } })).toBe(true);
  expect(validate({ next: { next: 1 } })).toBe(false);
});
