import { create } from '@bufbuild/protobuf';
import { BuiltinExecutorSchema, Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { createToolRegistry } from '../../src/registry';
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

test("the standard formats ajv-formats does not check (idn-email, idn-hostname, iri, iri-reference) compile, as annotations", () => {
  for (const format of ['idn-email', 'idn-hostname', 'iri', 'iri-reference']) {
    const { validate } = compiler.compile(JSON.stringify({ properties: { a: { type: 'string', format } } }));
    expect(validate({ a: 'anything at all' })).toBe(true);
  }
});

describe("tools dispatch does not own take an unknown format as an annotation", () => {
  const spec = (name: string, format: string) =>
    create(ToolSpecSchema, { name, effect: Effect.READ_ONLY, inputSchema: JSON.stringify({ type: 'object', properties: { a: { type: 'string', format } } }), executor: { case: 'builtin', value: create(BuiltinExecutorSchema, { name: 'echo' }) } });
  const registry = () => createToolRegistry(createSchemaCompiler(1 << 20), () => new Set(['builtin']));

  test("an MCP server's tool (unknownFormats: 'annotate') registers and checks nothing of it; the same by RPC is refused", () => {
    const r = registry();
    const [tool] = r.register([spec('mcp_tool', 'x-custom')], { tenant: '', unknownFormats: 'annotate' });
    expect(tool!.validate({ a: 'whatever' })).toBe(true);
    expect(() => r.register([spec('rpc_tool', 'x-custom')], { tenant: 'team' })).toThrow('unknown format "x-custom"');
  });

  test('a tool another replica registered (an older version allowed the format) loads here', () => {
    const r = registry();
    r.applyRemote({ type: 'register', tenant: 'team', specs: [spec('old_tool', 'emial')] });
    expect(r.lookup('team', 'old_tool')?.validate({ a: 'not an address' })).toBe(true);
  });
});
