import { createSchemaCompiler } from '../../src/registry/schema-compiler';

// Unknown formats are compile errors; the formats Ajv knows (ajv-formats) compile and are checked.

const compiler = createSchemaCompiler(1 << 20);
const refusal = (schema: object) => {
  try {
    compiler.compile(JSON.stringify(schema));
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};

test('an unknown format anywhere Ajv compiles is refused, with the nearest known one', () => {
  expect(refusal({ $defs: { a: { format: 'Email' } }, properties: { x: { $ref: '#/$defs/a' } } })).toBe('input_schema does not compile: unknown format "Email" at #/$defs/a: did you mean "email"?');
  expect(refusal({ properties: { a: { anyOf: [{ format: 'date-tim' }] } } })).toBe('input_schema does not compile: unknown format "date-tim" at #/properties/a/anyOf/0: did you mean "date-time"?');
  expect(refusal({ properties: { a: { format: 'x'.repeat(300) } } })).toMatch(/^input_schema does not compile: unknown format "x{100}\.\.\." at #\/properties\/a: known formats: /);
});

test('known formats compile and are checked, for strings and numbers', () => {
  const { validate } = compiler.compile(JSON.stringify({ properties: { when: { format: 'date' }, n: { type: 'integer', format: 'int32' } } }));
  expect(validate({ when: '2026-12-03', n: 1 })).toBe(true);
  expect(validate({ when: 'tomorrow' })).toBe(false);
  expect(validate({ n: 2 ** 31 })).toBe(false);
});

test('a format its schema never applies (an unused $defs entry) is not looked at, as Ajv does not compile it', () => {
  expect(refusal({ $defs: { unused: { format: 'nope' } } })).toBeUndefined();
});
