import { createSchemaCompiler } from '../../src/registry/schema-compiler';

// A default its own subschema refuses is refused at registration (found in review): it was filled
// into every call that left the field out, and each such call then failed INVALID_ARGUMENTS
// blaming a value the model never sent.

const compile = (schema: object) => createSchemaCompiler(1 << 20).compile(JSON.stringify(schema));

test.each<[object, string]>([
  [{ type: 'object', properties: { limit: { type: 'integer', minimum: 1, default: 0 } } }, 'the default of /properties/limit (0) does not match its own schema: the value must be >= 1'],
  [{ type: 'object', properties: { mode: { enum: ['a', 'b'], default: 'c' } } }, 'the default of /properties/mode ("c") does not match its own schema: the value must be equal to one of the allowed values'],
  [{ type: 'object', $defs: { pos: { type: 'integer', minimum: 1 } }, properties: { k: { $ref: '#/$defs/pos', default: 0 } } }, 'the default of /properties/k (0) does not match its own schema: the value must be >= 1'],
  [{ type: 'object', properties: { 'a b/c~': { type: 'string', default: 3 } } }, 'the default of /properties/a b~1c~0 (3) does not match its own schema: the value must be string'],
  [{ type: 'object', properties: { o: { type: 'object', properties: { x: { type: 'number', default: 'no' } } } } }, 'the default of /properties/o/properties/x ("no") does not match its own schema: the value must be number'],
  [{ type: 'object', properties: { list: { type: 'array', items: { type: 'string', default: 1 } } } }, 'the default of /properties/list/items (1) does not match its own schema: the value must be string'],
])('%j is refused', (schema, message) => {
  expect(() => compile(schema)).toThrow(`input_schema does not compile: ${message}`);
});

test.each<object>([
  { type: 'object', properties: { units: { type: 'string', enum: ['metric', 'imperial'], default: 'metric' }, n: { type: 'integer', default: 5 } } },
  { type: 'object', properties: { default: { type: 'string' } } },
  { $id: 'https://tools.example/s', type: 'object', properties: { q: { type: 'string', default: 'ok' } } },
  { type: 'object', properties: { o: { type: 'object', properties: { x: { type: 'number', default: 1 } }, default: {} } } },
])('%j compiles, defaults and all', (schema) => {
  const { validate } = compile(schema);
  expect(typeof validate).toBe('function');
});

test("a schema holding the $id the defaults' check would take as its key compiles, in any process (found in review)", () => {
  const compiler = createSchemaCompiler(1 << 20);
  // The keys are numbered per process: $ids 1 to 400 in one schema meet the next one, wherever the count is.
  const $defs = Object.fromEntries(Array.from({ length: 400 }, (_, k) => [`d${k + 1}`, { $id: `urn:dispatch:defaults:${k + 1}`, type: 'string' }]));
  const { validate } = compiler.compile(JSON.stringify({ type: 'object', $defs, properties: { a: { type: 'integer', default: 1 } } }));
  const value: Record<string, unknown> = {};
  expect(validate(value)).toBe(true);
  expect(value).toEqual({ a: 1 });
});
