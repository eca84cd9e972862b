import { clone, create } from '@bufbuild/protobuf';
import { BuiltinExecutorSchema, Effect, ToolSpecSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { createToolRegistry, createSchemaCompiler, type SchemaCompiler } from '../../src/registry';

// Each reconnection to Redis loads every stored tool on every replica (registry-replica.ts), and
// every one was compiled again: a tool of 256 KiB of schema takes ~0.5 s of the event loop, so a
// Redis failover stalled every replica for as long as all tenants' schemas took to compile. A tool
// held already, spec for spec, is now kept as it is.

const spec = (name: string, description = 'a tool'): ToolSpec =>
  create(ToolSpecSchema, { name, description, effect: Effect.READ_ONLY, inputSchema: '{"type":"object","properties":{"q":{"type":"string","pattern":"^a"}}}', executor: { case: 'builtin', value: create(BuiltinExecutorSchema, { name: 'echo' }) } });

function counting(): { compiler: SchemaCompiler; compiles: () => number } {
  const real = createSchemaCompiler(1 << 20);
  let n = 0;
  return { compiler: { ...real, compile: (...args) => (n++, real.compile(...args)) }, compiles: () => n };
}

test('a tool another replica announces again unchanged is not compiled again; a changed one is', () => {
  const { compiler, compiles } = counting();
  const registry = createToolRegistry(compiler, () => new Set(['builtin']));
  registry.applyRemote({ type: 'register', tenant: 't', specs: [spec('a'), spec('b')] });
  expect(compiles()).toBe(2);
  const held = registry.lookup('t', 'a');
  // As a reload decodes it: an equal spec, another object.
  registry.applyRemote({ type: 'register', tenant: 't', specs: [clone(ToolSpecSchema, spec('a')), clone(ToolSpecSchema, spec('b'))] });
  expect(compiles()).toBe(2);
  expect(registry.lookup('t', 'a')).toBe(held);
  registry.applyRemote({ type: 'register', tenant: 't', specs: [spec('a', 'changed'), spec('b')] });
  expect(compiles()).toBe(3);
  expect(registry.lookup('t', 'a')?.spec.description).toBe('changed');
  expect(registry.lookup('t', 'a')?.validate({ q: 'abc' })).toBe(true);
  expect(registry.lookup('t', 'a')?.validate({ q: 'xyz' })).toBe(false);
  // Another tenant's tool of the same name is its own.
  registry.applyRemote({ type: 'register', tenant: 'u', specs: [spec('a')] });
  expect(compiles()).toBe(4);
  registry.applyRemote({ type: 'remove', tenant: 't', name: 'a' });
  registry.applyRemote({ type: 'register', tenant: 't', specs: [spec('a')] });
  expect(compiles()).toBe(5);
});
