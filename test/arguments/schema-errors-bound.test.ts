import { create } from '@bufbuild/protobuf';
import { ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { prepareArguments } from '../../src/arguments';
import { chargeChecksTo, createSchemaCompiler, resolveTool } from '../../src/registry';
import { KEPT_ERRORS, MAX_CHECK_MS, MAX_SCHEMA_ERRORS } from '../../src/registry/schema-errors';

// Ajv's code (allErrors) kept every error whole until the call ended, each with its paths and
// references to the schema and data: 300,000 `{}` (900 KB, under max_argument_bytes) against an
// anyOf of 50 object variants ran the server out of memory; 30,000 took 666 MB and 6.3 s. Lists
// keep their first errors whole and count the rest; past a million, checking stops.

const compiler = createSchemaCompiler(256 * 1024);
afterAll(() => compiler.close());
// Each test's checks charged to a tenant of their own: a tenant's allowance of checking time
// (check-time.ts) is one second at once, which one test's costly check spends.
let tenants = 0;
const freshTenant = () => `t${++tenants}`;
beforeEach(() => chargeChecksTo(freshTenant()));

const variants = Array.from({ length: 50 }, (_, i) => ({ type: 'object', required: [`k${i}`] }));
const manyText = JSON.stringify({ type: 'object', properties: { items: { type: 'array', items: { anyOf: variants } } }, required: ['items'] });
const many = compiler.compile(manyText);
/** Why checking stops: at a million errors, or, on a loaded machine, at its time bound first. */
const STOP = `checking stopped (at ${MAX_SCHEMA_ERRORS} errors|after ${MAX_CHECK_MS} ms: the arguments are too costly to check against the tool's schema)`;
const STOPPED = new RegExp(`^${STOP}$`);
const empties = (n: number) => ({ items: Array.from({ length: n }, () => ({})) });

test('arguments making millions of errors are refused in bounded time and memory', () => {
  const before = process.memoryUsage().heapUsed;
  const start = performance.now();
  expect(many.validate(empties(300_000))).toBe(false);
  // Before: out of memory (30,000: 6.3 s, 666 MB); now ~350 ms.
  expect(performance.now() - start).toBeLessThan(3_000);
  expect(process.memoryUsage().heapUsed - before).toBeLessThan(200 * 1024 * 1024);
  const errors = many.validate.errors!;
  expect(errors).toHaveLength(KEPT_ERRORS + 1);
  expect(errors[0]).toMatchObject({ instancePath: '/items/0', keyword: 'required', params: { missingProperty: 'k0' } });
  // Checking stops at a million errors, or, on a loaded machine, at its time bound first.
  expect(errors.at(-1)).toMatchObject({ keyword: 'checkingStopped', message: expect.stringMatching(STOPPED) });
});

test('the model reads the first errors, and that checking stopped', () => {
  const tool = resolveTool(create(ToolSpecSchema, { name: 'many', inputSchema: manyText }), '', many);
  let message = 'accepted';
  try {
    prepareArguments(tool, JSON.stringify(empties(30_000)), { maxArgumentBytes: 1 << 20, maxArgumentDepth: 64 });
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).toContain('/items/0: missing required property "k0"');
  expect(message).toMatch(new RegExp(` \\(and more: ${STOP}\\); the tool was not executed$`));
});

test('under the bound every error is counted, the first ones kept whole', () => {
  expect(many.validate(empties(1_000))).toBe(false);
  const errors = many.validate.errors!;
  // 50 variants and the anyOf itself, per item.
  expect(errors).toHaveLength(51_000);
  expect(errors.slice(0, KEPT_ERRORS).every((e) => e.keyword !== 'notKept')).toBe(true);
  expect(errors[KEPT_ERRORS]!.keyword).toBe('notKept');
  expect(errors[50]).toMatchObject({ instancePath: '/items/0', keyword: 'anyOf' });
});

test('valid arguments whose anyOf branch fails 300,000 times on the way pass', () => {
  const { validate } = compiler.compile(JSON.stringify({ type: 'object', properties: { xs: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'array', items: { type: 'number' } }] } } }));
  expect(validate({ xs: Array.from({ length: 300_000 }, (_, i) => i) })).toBe(true);
  expect(validate({ xs: Array.from({ length: 300_000 }, (_, i) => (i === 299_999 ? true : i)) })).toBe(false);
  // The first branch's errors, then the second's one, then the anyOf's.
  expect(validate.errors).toHaveLength(300_002);
});

test('errors cut back past the kept ones by a passing branch leave the list exact', () => {
  const schema = { type: 'object', properties: { a: { type: 'array', items: { type: 'string' } }, b: { anyOf: [{ type: 'string' }, { type: 'number' }] }, c: { type: 'string' } } };
  const { validate } = compiler.compile(JSON.stringify(schema));
  expect(validate({ a: Array.from({ length: 150 }, () => 1), b: 2, c: 3 })).toBe(false);
  const errors = validate.errors!;
  expect(errors).toHaveLength(151);
  expect(errors[99]).toMatchObject({ instancePath: '/a/99', keyword: 'type' });
  expect(errors[150]!.keyword).toBe('notKept');
  expect(validate({ a: [], b: 2, c: 3 })).toBe(false);
  expect(validate.errors!.map((e) => e.instancePath)).toEqual(['/c']);
});

test('a recursive schema is bounded as well: its lists are appended, never past the bound', () => {
  const tree = JSON.stringify({
    $ref: '#/$defs/node',
    $defs: { node: { type: 'object', properties: { children: { type: 'array', items: { anyOf: [...variants.slice(0, 20), { $ref: '#/$defs/node' }] } } }, required: ['name'] } },
  });
  const { validate } = compiler.compile(tree);
  const start = performance.now();
  expect(validate({ name: 'r', children: Array.from({ length: 60_000 }, () => ({})) })).toBe(false);
  expect(performance.now() - start).toBeLessThan(3_000);
  expect(validate.errors!.at(-1)!.message).toMatch(STOPPED);
});

describe('checking stops after a second', () => {
  // 3,000 subschemas applied to each item: 40,000 one-letter items (160 KB) would take ~12 s of
  // the event loop every tenant shares (an allOf of 9,000 under items, 10,000 items: 6.6 s).
  const costly = { allOf: Array.from({ length: 3_000 }, (_, i) => ({ maxLength: i + 1 })) };

  test.each([
    ['an array', { type: 'object', properties: { a: { type: 'array', items: costly } } }, { a: Array.from({ length: 40_000 }, () => 'x') }],
    ['an object', { type: 'object', additionalProperties: costly }, Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`k${i}`, 'x']))],
  ])('%s whose values each take thousands of subschemas', (_what, schema, args) => {
    const text = JSON.stringify(schema);
    const compiled = compiler.compile(text);
    const start = performance.now();
    expect(compiled.validate(args)).toBe(false);
    expect(performance.now() - start).toBeLessThan(4_000);
    expect(compiled.validate.errors).toEqual([expect.objectContaining({ keyword: 'checkingStopped', message: `checking stopped after ${MAX_CHECK_MS} ms: the arguments are too costly to check against the tool's schema` })]);
    const tool = resolveTool(create(ToolSpecSchema, { name: 'costly', inputSchema: text }), '', compiled);
    const limits = { maxArgumentBytes: 1 << 20, maxArgumentDepth: 64 };
    expect(() => prepareArguments(tool, JSON.stringify(args), limits, undefined, freshTenant())).toThrow(`invalid arguments: checking stopped after ${MAX_CHECK_MS} ms: the arguments are too costly to check against the tool's schema; the tool was not executed`);
    // Arguments of a few values are checked whole.
    expect(() => prepareArguments(tool, JSON.stringify({ a: ['x'] }), limits)).not.toThrow();
  });
});
