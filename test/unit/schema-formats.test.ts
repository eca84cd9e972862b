import { create } from '@bufbuild/protobuf';
import { BuiltinExecutorSchema, Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { createToolRegistry } from '../../src/registry';
import { createSchemaCompiler } from '../../src/registry/schema-compiler';

// A format Ajv does not know is an annotation, as JSON Schema 2020-12 has it (schemas made by
// generators name such formats: pydantic's path, zod's ulid): it compiles, checks nothing, and is
// noted with where it is and, for a near miss, the known format it may mean. The formats Ajv knows
// (ajv-formats) compile and are checked.

const compiler = createSchemaCompiler(1 << 20);
const notes = (schema: object) => compiler.compile(JSON.stringify(schema)).unknownFormats;

test('an unknown format anywhere Ajv compiles is an annotation, noted with the nearest known one', () => {
  expect(notes({ $defs: { a: { format: 'Email' } }, properties: { x: { $ref: '#/$defs/a' } } })).toEqual(['"Email" at #/$defs/a (did you mean "email"?)']);
  expect(notes({ properties: { a: { anyOf: [{ format: 'date-tim' }] } } })).toEqual(['"date-tim" at #/properties/a/anyOf/0 (did you mean "date-time"?)']);
  expect(notes({ properties: { a: { format: 'x'.repeat(300) } } })).toEqual([`"${'x'.repeat(100)}..." at #/properties/a`]);
  const { validate } = compiler.compile(JSON.stringify({ properties: { p: { type: 'string', format: 'path' }, id: { type: 'string', format: 'ulid' } } }));
  expect(validate({ p: '/tmp/x', id: 'anything' })).toBe(true);
  expect(validate({ p: 7 })).toBe(false);
});

test('known formats compile and are checked, for strings and numbers', () => {
  const { validate } = compiler.compile(JSON.stringify({ properties: { when: { format: 'date' }, n: { type: 'integer', format: 'int32' } } }));
  expect(validate({ when: '2026-12-03', n: 1 })).toBe(true);
  expect(validate({ when: 'tomorrow' })).toBe(false);
  expect(validate({ n: 2 ** 31 })).toBe(false);
});

test('a format its schema never applies (an unused $defs entry) is not looked at, as Ajv does not compile it', () => {
  expect(notes({ $defs: { unused: { format: 'nope' } } })).toEqual([]);
});

test("the standard formats ajv-formats does not check (idn-email, idn-hostname, iri, iri-reference) compile, as annotations", () => {
  for (const format of ['idn-email', 'idn-hostname', 'iri', 'iri-reference']) {
    const { validate } = compiler.compile(JSON.stringify({ properties: { a: { type: 'string', format } } }));
    expect(validate({ a: 'anything at all' })).toBe(true);
  }
});

describe('in the registry, a tool with an unknown format registers, whoever registers it', () => {
  const spec = (name: string, format: string) =>
    create(ToolSpecSchema, { name, effect: Effect.READ_ONLY, inputSchema: JSON.stringify({ type: 'object', properties: { a: { type: 'string', format } } }), executor: { case: 'builtin', value: create(BuiltinExecutorSchema, { name: 'echo' }) } });
  const warnings: unknown[] = [];
  const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message, fields) => void warnings.push({ message, ...fields }) };
  const registry = () => createToolRegistry(createSchemaCompiler(1 << 20), () => new Set(['builtin']), { logger });

  test('by RPC (a pydantic path, a typo): registered, checking nothing, logged once per tool with the hint', () => {
    warnings.length = 0;
    const r = registry();
    const [path, typo] = r.register([spec('read_file', 'path'), spec('mail', 'emial')], { tenant: 'team' });
    expect(path!.validate({ a: 'whatever' })).toBe(true);
    expect(typo!.validate({ a: 'not an address' })).toBe(true);
    expect(warnings).toEqual([
      { message: 'a tool schema names formats nothing checks: they are annotations', tenant: 'team', tool: 'read_file', formats: ['"path" at #/properties/a'] },
      { message: 'a tool schema names formats nothing checks: they are annotations', tenant: 'team', tool: 'mail', formats: ['"emial" at #/properties/a (did you mean "email"?)'] },
    ]);
  });

  test('from another replica (an older version stored it)', () => {
    const r = registry();
    r.applyRemote({ type: 'register', tenant: 'team', specs: [spec('old_tool', 'emial')] });
    expect(r.lookup('team', 'old_tool')?.validate({ a: 'not an address' })).toBe(true);
  });
});

test("an unknown format is noted once per place, not again where a default's check compiles it (found in review)", () => {
  expect(notes({ properties: { p: { type: 'string', format: 'path', default: '/tmp' }, q: { type: 'object', properties: { e: { type: 'string', format: 'emial' } }, default: {} } } })).toEqual([
    '"path" at #/properties/p',
    '"emial" at #/properties/q/properties/e (did you mean "email"?)',
  ]);
});
