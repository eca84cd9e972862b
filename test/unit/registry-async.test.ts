// Registrations compile their schemas in the compiler's worker thread (registerAsync,
// applyRemoteAsync): a tenant's changes still apply in the order asked, all or none, and a tool
// removed while a registration compiles leaves the registry and its pattern counts consistent.
// The worker is bounded: a compile past its timeout fails with a clear message (the worker is
// started again), a full queue refuses, and closing ends it.
import { readdirSync } from 'node:fs';
import { create } from '@bufbuild/protobuf';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { createSchemaCompiler, createToolRegistry, RegistryError } from '../../src/registry';
import { patternsOwned } from '../../src/registry/pattern-pool';

jest.setTimeout(60_000);

/** A schema of `count` properties with a pattern each (`^<tag>N$`): 0.2-0.5 s to compile at 200. */
function schema(tag: string, count: number): string {
  const props = Array.from({ length: count }, (_, i) => [`p${i}`, { type: 'string', pattern: `^${tag}${i}$`, default: `${tag}${i}` }]);
  return JSON.stringify({ type: 'object', properties: Object.fromEntries(props) });
}
/** A schema of `count` properties sharing one pattern: ~3 s to compile at 3,000. (Over 4 KiB, ~70 properties, a schema compiles in the worker thread.) */
function wide(count: number): string {
  const props = Array.from({ length: count }, (_, i) => [`p${i}`, { type: 'string', pattern: '^a+$', format: 'email', default: 'a@b.co' }]);
  return JSON.stringify({ type: 'object', properties: Object.fromEntries(props) });
}
const spec = (name: string, inputSchema: string, description = 'a tool') =>
  create(ToolSpecSchema, { name, description, effect: Effect.READ_ONLY, inputSchema, executor: { case: 'http', value: { url: 'http://127.0.0.1:8/x' } } });

const compilers: { close(): Promise<void> }[] = [];
let shared: ReturnType<typeof createSchemaCompiler> | undefined;
/**
 * A registry on a compiler of its own when given options; without, on the file's shared compiler
 * (its worker thread started once, not once a test: ~0.6 s of CPU each).
 */
function newRegistry(options?: Parameters<typeof createSchemaCompiler>[1]) {
  let compiler = options ? undefined : shared;
  if (!compiler) {
    compiler = createSchemaCompiler(1 << 20, options ?? {});
    compilers.push(compiler);
    if (!options) shared = compiler;
  }
  return createToolRegistry(compiler, () => new Set(['http']));
}

afterAll(async () => {
  for (const compiler of compilers) await compiler.close();
});

test("a tenant's later registration is not overtaken by an earlier, slower one; the validate functions work", async () => {
  const registry = newRegistry();
  const first = spec('t', schema('fast', 2), 'first');
  await registry.registerAsync([first], { tenant: 'order' });
  const order: string[] = [];
  // The second needs no compile (the tool is held as it is, when asked): it waits all the same.
  const slow = registry.registerAsync([spec('t', schema('slow', 100), 'slow')], { tenant: 'order', replace: true }).then(() => order.push('slow'));
  const back = registry.registerAsync([first], { tenant: 'order', replace: true }).then(() => order.push('back'));
  await Promise.all([slow, back]);
  expect(order).toEqual(['slow', 'back']);
  const tool = registry.lookup('order', 't')!;
  expect(tool.spec.description).toBe('first');
  const args: Record<string, unknown> = { p0: 'fast0' };
  expect(tool.validate(args)).toBe(true);
  expect(args).toEqual({ p0: 'fast0', p1: 'fast1' });
  expect(tool.validate({ p0: 'slow0' })).toBe(false);
  expect(tool.validate.errors?.[0]).toMatchObject({ instancePath: '/p0', keyword: 'pattern', message: 'must match pattern "^fast0$"' });
  expect(patternsOwned('order')).toBe(2);
});

test('another replica’s registration then removal apply in that order, though the registration compiles first', async () => {
  const registry = newRegistry();
  const registered = registry.applyRemoteAsync({ type: 'register', tenant: 'remote', specs: [spec('r', schema('r', 100))] });
  const removed = registry.applyRemoteAsync({ type: 'remove', tenant: 'remote', name: 'r' });
  await Promise.all([registered, removed]);
  expect(registry.lookup('remote', 'r')).toBeUndefined();
  expect(patternsOwned('remote')).toBe(0);
});

test("another replica's removal and the registration that followed it apply in one go: the tool is never missing meanwhile", async () => {
  const registry = newRegistry();
  await registry.applyRemoteAsync({ type: 'register', tenant: 'again', specs: [spec('r', schema('v1_', 2), 'v1')] });
  const both = registry.applyRemoteAsync([{ type: 'remove', tenant: 'again', name: 'r' }, { type: 'register', tenant: 'again', specs: [spec('r', schema('v2_', 200), 'v2')] }]);
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(registry.lookup('again', 'r')?.spec.description).toBe('v1');
  await both;
  expect(registry.lookup('again', 'r')?.spec.description).toBe('v2');
  expect(patternsOwned('again')).toBe(200);
});

test('all or none: a registration with a schema that does not compile installs nothing and holds no pattern', async () => {
  const registry = newRegistry();
  const error = await registry.registerAsync([spec('good', schema('g', 50)), spec('bad', '{"type":"object","properties":{"s":{"pattern":"(?<=a)b"}}}')], { tenant: 'aon' }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RegistryError);
  expect((error as RegistryError).code).toBe('invalid');
  expect((error as Error).message).toMatch(/^tools\[1\] \("bad"\): input_schema does not compile: /);
  expect(registry.lookup('aon', 'good')).toBeUndefined();
  expect(patternsOwned('aon')).toBe(0);
});

test('a tool held as it is, removed while the rest of its registration compiles, is compiled and counted again', async () => {
  const registry = newRegistry();
  await registry.registerAsync([spec('kept', schema('k', 3))], { tenant: 'held' });
  const pending = registry.registerAsync([spec('kept', schema('k', 3)), spec('new', schema('n', 200))], { tenant: 'held', replace: true });
  // The registration has checked its specs and waits for the worker: the held tool goes now.
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(registry.remove('held', 'kept')).toBe(true);
  expect(patternsOwned('held')).toBe(0);
  await pending;
  expect(registry.lookup('held', 'kept')?.validate({ p0: 'k0' })).toBe(true);
  expect(patternsOwned('held')).toBe(203);
  registry.remove('held', 'kept');
  registry.remove('held', 'new');
  expect(patternsOwned('held')).toBe(0);
});

test('a compile past the timeout fails with a clear message; the worker is started again for the next', async () => {
  const registry = newRegistry({ timeoutMs: 600 });
  // 8,000 properties: ~3 s to compile on a quiet machine, five times the timeout (3,000 compiled
  // within 1,500 ms on a fast one, and then failed on their defaults). The timeout was 1,500 ms:
  // the worker compiled that long for nothing, where 600 shows the same.
  const error = await registry.registerAsync([spec('slow', wide(8000))], { tenant: 'timeout' }).catch((e: unknown) => e);
  expect((error as RegistryError).code).toBe('invalid');
  expect((error as Error).message).toBe('tools[0] ("slow"): input_schema does not compile: compiling it took longer than 600 ms; simplify the schema (fewer or smaller subschemas)');
  expect(registry.lookup('timeout', 'slow')).toBeUndefined();
  await expect(registry.registerAsync([spec('small', schema('x', 1))], { tenant: 'timeout' })).resolves.toHaveLength(1);
  expect(registry.lookup('timeout', 'small')?.validate({ p0: 'x0' })).toBe(true);
});

test('a full queue refuses (limit); closing refuses what waits and what comes after', async () => {
  const registry = newRegistry({ maxQueued: 1 });
  const first = registry.registerAsync([spec('a', schema('a', 100))], { tenant: 'q1' });
  const second = registry.registerAsync([spec('b', schema('b', 100))], { tenant: 'q2' }).catch((e: unknown) => e);
  const third = registry.registerAsync([spec('c', schema('c', 100))], { tenant: 'q3' }).catch((e: unknown) => e);
  const refused = await third;
  expect((refused as RegistryError).code).toBe('limit');
  expect((refused as Error).message).toBe('the schema compiler has 1 schemas waiting, its limit; try again in a few seconds');
  await expect(first).resolves.toHaveLength(1);
  await expect(second).resolves.toHaveLength(1);
  // One compiling (long), one waiting: closing refuses both.
  const running = registry.registerAsync([spec('d', wide(3000))], { tenant: 'q4' }).catch((e: unknown) => e);
  const waiting = registry.registerAsync([spec('e', schema('e', 100))], { tenant: 'q5' }).catch((e: unknown) => e);
  await new Promise((resolve) => setTimeout(resolve, 50));
  await registry.close();
  for (const outcome of [await running, await waiting]) {
    expect((outcome as RegistryError).code).toBe('limit');
    expect((outcome as Error).message).toBe('the schema compiler was closed while the schema waited: the server is shutting down; register the tools with another replica');
  }
  const late = await registry.registerAsync([spec('f', schema('f', 100))], { tenant: 'q6' }).catch((e: unknown) => e);
  expect((late as RegistryError).code).toBe('limit');
  expect((late as Error).message).toBe('the schema compiler is closed: the server is shutting down; register the tools with another replica');
});

test('an idle worker thread ends, giving its heap back, and the next compile starts another', async () => {
  const threads = () => readdirSync('/proc/self/task').length;
  const registry = newRegistry({ idleMs: 300 });
  const before = threads();
  await registry.registerAsync([spec('idle', schema('idle', 100))], { tenant: 'idle' });
  expect(threads()).toBeGreaterThan(before);
  // Bounded wait for the thread to end (300 ms idle, then its termination).
  for (let i = 0; i < 50 && threads() > before; i++) await new Promise((r) => setTimeout(r, 100));
  expect(threads()).toBe(before);
  await registry.registerAsync([spec('again', schema('again', 100))], { tenant: 'idle' });
  expect(registry.lookup('idle', 'again')!.validate({ p0: 'again0' })).toBe(true);
});

test('property names holding "__proto__" compile in the worker as they did in-thread', async () => {
  const registry = newRegistry();
  const text = JSON.stringify({
    type: 'object',
    properties: { 'a"__proto__': { type: 'string' }, b: { const: 'x"__proto__' } },
    required: ['a"__proto__'],
    additionalProperties: false,
  });
  await registry.registerAsync([spec('proto', text)], { tenant: 'proto' });
  const tool = registry.lookup('proto', 'proto')!;
  const args = JSON.parse('{"a\\"__proto__":"x"}') as Record<string, unknown>;
  expect(tool.validate(args)).toBe(true);
  expect(tool.validate(JSON.parse('{"a\\"__proto__":5}'))).toBe(false);
});

test('a small schema (4 KiB at most) compiles on the event loop: its tool is there as soon as the registration settles, no worker started', async () => {
  const threads = () => readdirSync('/proc/self/task').length;
  const registry = newRegistry();
  const before = threads();
  const small = schema('small', 10);
  expect(Buffer.byteLength(small)).toBeLessThanOrEqual(4 * 1024);
  const started = performance.now();
  await registry.registerAsync([spec('small', small)], { tenant: 'small' });
  expect(performance.now() - started).toBeLessThan(1_000);
  // No thread started (another test's idle worker may end meanwhile).
  expect(threads()).toBeLessThanOrEqual(before);
  expect(registry.lookup('small', 'small')!.validate({ p0: 'small0' })).toBe(true);
});
