import { createSchemaCompiler } from '../../src/registry/schema-compiler';
import { startApp } from '../helpers/servers';

// A schema naming a member `__proto__` (`properties`, `dependentSchemas`, `dependentRequired`):
// Ajv's code never read that member as the schema said. `{"__proto__": 5}` passed a string
// property, nothing under it was checked or repaired, and beside `additionalProperties: false` a
// valid `{"__proto__": "s"}` was refused as unexpected. Such a schema is refused at registration,
// naming where, rather than registered to promise what validation does not do.

const compiler = createSchemaCompiler(1 << 20);
const compile = (schema: string) => () => compiler.compile(schema);
const refused = (where: string) => new Error(`input_schema does not compile: ${where} names a member "__proto__", which JSON Schema validation cannot check as written (it is read as the object's prototype): rename the property`);

test.each([
  ['properties', '{"type":"object","properties":{"__proto__":{"type":"string"}}}', '#/properties'],
  ['nested properties', '{"type":"object","properties":{"a":{"type":"object","properties":{"__proto__":{"type":"integer"}}}}}', '#/properties/a/properties'],
  ['a $defs model', '{"$defs":{"M":{"properties":{"__proto__":{}}}},"properties":{"m":{"$ref":"#/$defs/M"}}}', '#/$defs/M/properties'],
  ['dependentSchemas', '{"dependentSchemas":{"__proto__":{"required":["x"]}}}', '#/dependentSchemas'],
  ['dependentRequired', '{"dependentRequired":{"__proto__":["x"]}}', '#/dependentRequired'],
])('a member named __proto__ under %s is refused', (_what, schema, where) => {
  expect(compile(schema)).toThrow(refused(where));
});

test('__proto__ as data (a const, an enum, a default) or as a required name alone is no member schema, and compiles', () => {
  expect(compile('{"properties":{"p":{"const":{"__proto__":1}}}}')).not.toThrow();
  expect(compile('{"properties":{"p":{"enum":[{"properties":{"__proto__":{}}}]}}}')).not.toThrow();
  expect(compile('{"required":["__proto__"]}')).not.toThrow();
  expect(compile('{"properties":{"proto":{"type":"string"},"constructor":{"type":"string"}}}')).not.toThrow();
});

test('RegisterTools refuses such a tool INVALID_ARGUMENT, naming it, and registers nothing', async () => {
  const d = await startApp('');
  try {
    const inputSchema = '{"type":"object","properties":{"__proto__":{"type":"string"}},"additionalProperties":false}';
    await expect(d.registry.registerTools({ tools: [{ name: 'bad', inputSchema, effect: 1, executor: { case: 'builtin', value: { name: 'echo' } } }] })).rejects.toMatchObject({
      code: 3,
      details: expect.stringContaining('#/properties names a member "__proto__"'),
    });
    expect((await d.registry.listTools({})).tools.map((t) => t.name)).not.toContain('bad');
  } finally {
    await d.close();
  }
});
