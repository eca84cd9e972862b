import { prepareArguments } from '../../src/arguments';
import type { ResolvedTool } from '../../src/registry';
import { createSchemaCompiler } from '../../src/registry/schema-compiler';

// Schemas see only the arguments' own properties (Ajv's ownProperties), and defaults Ajv's own
// filling would lose (a "__proto__" key, a name Object.prototype has) are filled as own data.

const compiler = createSchemaCompiler(1 << 20);
const validated = (schema: string, args: string) => {
  const { validate } = compiler.compile(schema);
  const value: unknown = JSON.parse(args);
  return { valid: validate(value), value: JSON.stringify(value), errors: (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`) };
};

test('required, properties and dependentRequired look at own properties only', () => {
  expect(validated('{"required":["hasOwnProperty"]}', '{}')).toMatchObject({ valid: false, errors: [" must have required property 'hasOwnProperty'"] });
  expect(validated('{"properties":{"valueOf":{"type":"string"}}}', '{}')).toMatchObject({ valid: true });
  expect(validated('{"properties":{"valueOf":{"type":"string"}}}', '{"valueOf":1}')).toMatchObject({ valid: false, errors: ['/valueOf must be string'] });
  expect(validated('{"dependentRequired":{"toString":["b"]}}', '{}')).toMatchObject({ valid: true });
  expect(validated('{"dependentRequired":{"toString":["b"]}}', '{"toString":1}')).toMatchObject({ valid: false });
  expect(validated('{"additionalProperties":false}', '{"__proto__":1}')).toMatchObject({ valid: false, errors: [' must NOT have additional properties'] });
});

test('defaults Ajv would lose are filled as own properties, nested too, each call a fresh copy', () => {
  const schema = '{"type":"object","properties":{"o":{"type":"object","properties":{"constructor":{"default":"c"},"deep":{"default":[{"__proto__":null}]}}}}}';
  const { validate } = compiler.compile(schema);
  const first = { o: {} as Record<string, unknown> };
  expect(validate(first)).toBe(true);
  expect(JSON.stringify(first)).toBe('{"o":{"constructor":"c","deep":[{"__proto__":null}]}}');
  (first.o.deep as unknown[]).push(1);
  const second = { o: {} };
  validate(second);
  expect(JSON.stringify(second)).toBe('{"o":{"constructor":"c","deep":[{"__proto__":null}]}}');
  // The schema's text and the tool's stored schema keep the default where it was written.
  expect(JSON.stringify(compiler.compile(schema).schema)).toBe(schema);
});

test('those defaults are filled before required and the rest look at the object', () => {
  expect(validated('{"properties":{"toString":{"default":"d"}},"required":["toString"],"minProperties":1}', '{}')).toEqual({ valid: true, value: '{"toString":"d"}', errors: [] });
});

test('like the other defaults, none is filled under anyOf, oneOf or not', () => {
  expect(validated('{"anyOf":[{"properties":{"toString":{"default":"d"}}}]}', '{}')).toEqual({ valid: true, value: '{}', errors: [] });
});

test('a default is checked against its own schema with its "__proto__" key', () => {
  expect(() => compiler.compile('{"properties":{"a":{"default":{"__proto__":{}},"additionalProperties":false}}}')).toThrow(
    'input_schema does not compile: the default of /properties/a ({"__proto__":{}}) does not match its own schema: the value must NOT have additional properties',
  );
});

test('the keyword carrying those defaults is reserved', () => {
  expect(() => compiler.compile('{"properties":{"a":{"dispatch:ownDefaults":{"b":1}}}}')).toThrow('input_schema does not compile: the keyword "dispatch:ownDefaults" is reserved');
});

test("a lenient tool lists the defaults filled for names objects inherit", () => {
  const { schema, validate } = compiler.compile('{"type":"object","properties":{"toString":{"type":"string","default":"d"}}}');
  const tool = { name: 't', spec: { lenientArguments: true }, schema, validate } as unknown as ResolvedTool;
  expect(prepareArguments(tool, '{}', { maxArgumentBytes: 1 << 20, maxArgumentDepth: 64 })).toEqual({ args: { toString: 'd' }, warnings: ['applied default /toString: "d"'] });
});
