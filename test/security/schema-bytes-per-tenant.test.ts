// limits.max_schema_bytes_per_tenant (found in review): a compiled schema takes ~16-20 bytes of
// heap per byte, and nothing bounded a tenant's schemas but max_tools_per_tenant (1,000) x
// max_schema_bytes (256 KiB): ~4 GiB of compiled schemas for one tenant, re-compiled on every
// replica sharing Redis. A registration past the tenant's bytes is refused before any compile.
import { status } from '@grpc/grpc-js';
import { create } from '@bufbuild/protobuf';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { resolveLimits } from '../../src/options';
import { createSchemaCompiler, createToolRegistry, RegistryError } from '../../src/registry';
import { startWorkerApp } from '../workers/worker-app';
import { startWorker } from '../workers/worker-harness';
import { authYaml, bearer, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';

const A: TestToken = { token: 'tenant-a-admin-token', tenant: 'team-a', scopes: ['dispatch', 'admin'] };
const B: TestToken = { token: 'tenant-b-admin-token', tenant: 'team-b', scopes: ['dispatch', 'admin'] };

/** A schema text of exactly `bytes` bytes. */
const schemaOf = (bytes: number) => `{"type":"object","description":"${'d'.repeat(bytes - 34)}"}`;
const spec = (name: string, bytes: number) => ({ name, effect: Effect.READ_ONLY, inputSchema: schemaOf(bytes), executor: { case: 'builtin' as const, value: { name: 'echo' } } });

let app: AuthApp;
beforeAll(async () => {
  const configTools = 'tools:\n  - name: shared\n    effect: read_only\n    builtin: { name: echo }\n    input_schema: \'' + schemaOf(5000) + '\'\n';
  app = await startAuthApp(`${configTools}limits:\n  max_schema_bytes_per_tenant: 3000\n${authYaml([A, B])}`);
});
afterAll(() => app.close());

const register = (who: TestToken, tools: ReturnType<typeof spec>[], replace = false) => statusOf(app.registry.registerTools({ tools, replace }, bearer(who.token)));

test('a tenant\'s schemas may hold max_schema_bytes_per_tenant bytes together (the config file\'s count for none); past it RESOURCE_EXHAUSTED, nothing registered', async () => {
  expect(schemaOf(1000)).toHaveLength(1000);
  expect(await register(A, [spec('a1', 1000), spec('a2', 1000)])).toEqual({ code: 'ok', details: '' });
  expect(await register(A, [spec('a3', 600), spec('a4', 600)])).toEqual({
    code: status.RESOURCE_EXHAUSTED,
    details: 'tenant "team-a" would have 3200 bytes of input schemas, over the limit of 3000 (limits.max_schema_bytes_per_tenant); remove tools it no longer uses, or make their schemas smaller',
  });
  const names = (await app.registry.listTools({}, bearer(A.token))).tools.map((t) => t.name);
  expect(names).toEqual(['a1', 'a2', 'shared']);
  // Another tenant has its own bytes.
  expect(await register(B, [spec('b1', 3000)])).toEqual({ code: 'ok', details: '' });
});

test('a tool replacing one of the same name counts once; a removal makes room', async () => {
  expect(await register(A, [spec('a1', 1900)], true)).toEqual({ code: 'ok', details: '' });
  expect((await register(A, [spec('a1', 2100)], true)).code).toBe(status.RESOURCE_EXHAUSTED);
  await app.registry.removeTool({ name: 'a2' }, bearer(A.token));
  expect(await register(A, [spec('a3', 1100)])).toEqual({ code: 'ok', details: '' });
});

test("a worker's hello past its tenant's bytes ends RESOURCE_EXHAUSTED, registering none", async () => {
  const t = await startWorkerApp({}, { yaml: 'limits: { max_schema_bytes_per_tenant: 3000 }\n' });
  try {
    const tool = (name: string) => ({ name, effect: Effect.READ_ONLY, inputSchema: schemaOf(2000) });
    await t.worker({ id: 'w1', tools: [tool('w_1')] });
    const second = startWorker(t.address, { id: 'w2', tools: [tool('w_2')] });
    const ended = await second.ended;
    expect(ended.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(ended.details).toBe('tenant "default" would have 4000 bytes of input schemas, over the limit of 3000 (limits.max_schema_bytes_per_tenant); remove tools it no longer uses, or make their schemas smaller');
    expect((await t.registry.listTools({})).tools.map((x) => x.name)).toEqual(['w_1']);
  } finally {
    await t.close();
  }
});

test("a tool from another replica past the tenant's bytes is kept here (the registering replica decided), and logged", () => {
  const warnings: string[] = [];
  const logger = { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
  const registry = createToolRegistry(createSchemaCompiler(65_536), () => new Set(['builtin']), { maxSchemaBytesPerTenant: 3000, logger });
  const remote = (name: string) => create(ToolSpecSchema, { ...spec(name, 2000) });
  registry.applyRemote({ type: 'register', tenant: 't', specs: [remote('r1')] });
  registry.applyRemote({ type: 'register', tenant: 't', specs: [remote('r2')] });
  expect(registry.list('t').map((tool) => tool.name)).toEqual(['r1', 'r2']);
  expect(warnings).toEqual([expect.stringContaining("a tenant's tools from other replicas are over its limits here")]);
  // A registration here that leaves the tenant over is still refused.
  expect(() => registry.register([remote('r3')], { tenant: 't' })).toThrow(RegistryError);
});

test('the default is 2 MiB', () => {
  expect(resolveLimits({}).maxSchemaBytesPerTenant).toBe(2 * 1024 * 1024);
});
