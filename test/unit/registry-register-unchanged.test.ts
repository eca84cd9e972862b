// A worker declares its tools in its hello on every reconnection (register, replace), and each was
// compiled again: a tool of 256 KiB of schema takes 0.4-1 s of the event loop, stalling every call
// in flight. A tool the tenant holds already, spec for spec, is now kept as it is (RegisterTools
// with replace too); a changed one compiles as before, and a failed batch leaves everything as it was.
import { clone, create } from '@bufbuild/protobuf';
import { Effect, ToolSpecSchema, WorkerExecutorSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { createSchemaCompiler, createToolRegistry, RegistryError, type RegistryChange, type SchemaCompiler } from '../../src/registry';
import { patternsOwned } from '../../src/registry/pattern-pool';
import { SILENT_LOGGER } from '../../src/log';

const schema = (tag: string) => JSON.stringify({ type: 'object', properties: { q: { type: 'string', pattern: `^${tag}` } } });
const spec = (name: string, description = 'a tool', inputSchema = schema(name)): ToolSpec =>
  create(ToolSpecSchema, { name, description, effect: Effect.READ_ONLY, inputSchema, executor: { case: 'worker', value: create(WorkerExecutorSchema, {}) } });
/** As a hello decodes them: equal specs, other objects. */
const again = (...specs: ToolSpec[]) => specs.map((s) => clone(ToolSpecSchema, s));

function counting(): { compiler: SchemaCompiler; compiles: () => number } {
  const real = createSchemaCompiler(1 << 20);
  let n = 0;
  return { compiler: { ...real, compile: (...args) => (n++, real.compile(...args)) }, compiles: () => n };
}

function setup() {
  const { compiler, compiles } = counting();
  const registry = createToolRegistry(compiler, () => new Set(['worker']), { logger: SILENT_LOGGER });
  const changes: RegistryChange[] = [];
  registry.onChange((change) => void changes.push(change));
  return { registry, compiles, changes };
}

test('a worker saying hello again with the same tools compiles nothing; a changed tool compiles only itself', () => {
  const { registry, compiles, changes } = setup();
  registry.register([spec('a'), spec('b'), spec('c')], { tenant: 't', replace: true });
  expect(compiles()).toBe(3);
  const [a, b, c] = ['a', 'b', 'c'].map((name) => registry.lookup('t', name));
  const owned = patternsOwned('t');
  expect(owned).toBe(3);

  const tools = registry.register(again(spec('a'), spec('b'), spec('c')), { tenant: 't', replace: true, maxTools: 3 });
  expect(compiles()).toBe(3);
  expect(tools).toEqual([a, b, c]);
  expect(registry.lookup('t', 'a')).toBe(a);
  // Still told (Redis replication writes it, as before), and the patterns still count once.
  expect(changes.map((change) => change.type)).toEqual(['register', 'register']);
  expect(patternsOwned('t')).toBe(owned);

  registry.register(again(spec('a'), spec('b', 'changed', schema('z')), spec('c')), { tenant: 't', replace: true });
  expect(compiles()).toBe(4);
  expect(registry.lookup('t', 'a')).toBe(a);
  expect(registry.lookup('t', 'c')).toBe(c);
  const changed = registry.lookup('t', 'b')!;
  expect(changed).not.toBe(b);
  expect(changed.spec.description).toBe('changed');
  expect(changed.validate({ q: 'zz' })).toBe(true);
  expect(changed.validate({ q: 'bb' })).toBe(false);
  expect(a!.validate({ q: 'aa' })).toBe(true);
  expect(patternsOwned('t')).toBe(3);

  // Another tenant's tool of the same name is its own.
  registry.register([spec('a')], { tenant: 'u', replace: true });
  expect(compiles()).toBe(5);
  expect(registry.lookup('u', 'a')).not.toBe(a);
});

test('RegisterTools with an equal spec: kept with replace, refused without as before', () => {
  const { registry, compiles } = setup();
  registry.register([spec('a')], { tenant: 'r' });
  const a = registry.lookup('r', 'a');
  expect(() => registry.register(again(spec('a')), { tenant: 'r' })).toThrow('tools[0]: tool "a" is already registered (set replace: true in RegisterToolsRequest, or dispatchctl tools register --replace, to overwrite it)');
  registry.register(again(spec('a')), { tenant: 'r', replace: true });
  expect(compiles()).toBe(1);
  expect(registry.lookup('r', 'a')).toBe(a);
  // The checks still run: a duplicate name in one request is refused, nothing changes.
  expect(() => registry.register(again(spec('a'), spec('a')), { tenant: 'r', replace: true })).toThrow('duplicate tool name "a"');
  expect(registry.lookup('r', 'a')).toBe(a);
});

test('a batch where one tool fails leaves the registry as it was, the kept tools and their patterns included', () => {
  const { registry, compiles, changes } = setup();
  registry.register([spec('a'), spec('b')], { tenant: 'f', replace: true });
  const [a, b] = [registry.lookup('f', 'a')!, registry.lookup('f', 'b')!];
  expect(() => registry.register(again(spec('a'), spec('n'), spec('b', 'broken', '{"type": 3}')), { tenant: 'f', replace: true })).toThrow(RegistryError);
  expect(compiles()).toBe(4);
  expect(registry.list('f')).toEqual([a, b]);
  expect(patternsOwned('f')).toBe(2);
  expect(a.validate({ q: 'a1' })).toBe(true);
  expect(changes).toHaveLength(1);
  // Removed, then declared again: compiled anew.
  registry.remove('f', 'a');
  registry.register(again(spec('a')), { tenant: 'f', replace: true });
  expect(compiles()).toBe(5);
  expect(registry.lookup('f', 'a')).not.toBe(a);
});

test('a tool declared again unchanged while its removal is being shared is kept, as a new registration', async () => {
  const { registry, compiles } = setup();
  registry.register([spec('t')], { tenant: 'acme' });
  const held = registry.lookup('acme', 't');
  registry.onChange((change) => {
    if (change.type === 'remove') registry.register(again(spec('t')), { tenant: 'acme', replace: true });
  });
  await expect(registry.removeShared('acme', 't')).resolves.toBe(true);
  expect(registry.lookup('acme', 't')).toBeDefined();
  expect(registry.lookup('acme', 't')).not.toBe(held);
  expect(compiles()).toBe(2);
});

test("another replica's worker declaring it again while its removal is being shared: kept too", async () => {
  const { registry } = setup();
  registry.register([spec('t')], { tenant: 'acme' });
  registry.onChange((change) => {
    if (change.type === 'remove') registry.applyRemote({ type: 'register', tenant: 'acme', specs: again(spec('t')) });
  });
  await expect(registry.removeShared('acme', 't')).resolves.toBe(true);
  expect(registry.lookup('acme', 't')?.validate({ q: 't1' })).toBe(true);
});

test("over its pattern bound (another replica's tools), a tenant's tool declared again here compiles and is refused as before", () => {
  const { registry, compiles } = setup();
  const many = (tag: string) => JSON.stringify({ type: 'object', properties: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i}`, { type: 'string', pattern: `^${tag}${i}$` }])) });
  registry.register([spec('mine', 'mine', many('a'))], { tenant: 'o' });
  registry.applyRemote({ type: 'register', tenant: 'o', specs: [spec('theirs', 'theirs', many('b'))] });
  const mine = registry.lookup('o', 'mine');
  expect(() => registry.register(again(spec('mine', 'mine', many('a'))), { tenant: 'o', replace: true })).toThrow('tenant "o" would hold 501 distinct patterns');
  expect(compiles()).toBe(3);
  expect(registry.lookup('o', 'mine')).toBe(mine);
  expect(patternsOwned('o')).toBe(600);
});
