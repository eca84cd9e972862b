// limits.max_schema_bytes_compiled_per_minute_per_tenant (found by a hostile-worker hunt): schema
// compiling is synchronous, and a worker whose hello carried another ~220 KB schema on every
// reconnection stalled the replica's event loop 0.8-1.5 s per hello (with Redis, every replica's),
// with only a `worker` token; a replacement counts once against max_schema_bytes_per_tenant, so
// nothing bounded the rate. A tenant's new or changed schemas compiled here now have a budget per
// minute; a spec registered again unchanged costs nothing.
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

/** A schema text of exactly 2,000 bytes, different for each `variant`. */
const schemaOf = (variant: string) => `{"type":"object","description":"${variant}${'d'.repeat(2000 - 34 - variant.length)}"}`;
const spec = (name: string, variant: string) => ({ name, effect: Effect.READ_ONLY, inputSchema: schemaOf(variant), executor: { case: 'builtin' as const, value: { name: 'echo' } } });
const REFUSAL = /^tenant "team-a" would compile 2000 bytes of new or changed input schemas, over what is left of its budget of 5000 bytes compiled per minute on this replica \(\d+ bytes; limits\.max_schema_bytes_compiled_per_minute_per_tenant\); try again in \d+ s\. A tool registered again unchanged is not compiled and not counted$/;

let app: AuthApp;
beforeAll(async () => {
  // The config file's tool (tenant "") is compiled whatever the budget.
  const configTools = `tools:\n  - name: shared\n    effect: read_only\n    builtin: { name: echo }\n    input_schema: '{"type":"object","description":"${'e'.repeat(10_000)}"}'\n`;
  app = await startAuthApp(`${configTools}limits:\n  max_schema_bytes_compiled_per_minute_per_tenant: 5000\n${authYaml([A, B])}`);
});
afterAll(() => app.close());

const register = (who: TestToken, tools: ReturnType<typeof spec>[]) => statusOf(app.registry.registerTools({ tools, replace: true }, bearer(who.token)));

test('changed schemas past the budget are refused RESOURCE_EXHAUSTED, naming the limit and when to try again; unchanged ones never count; another tenant is unaffected', async () => {
  expect(schemaOf('v1')).toHaveLength(2000);
  expect(await register(A, [spec('a1', 'v1')])).toEqual({ code: 'ok', details: '' });
  // The spec held, registered again as it is (a worker's hello on each reconnection), is not compiled nor charged.
  for (let i = 0; i < 5; i++) expect(await register(A, [spec('a1', 'v1')])).toEqual({ code: 'ok', details: '' });
  expect(await register(A, [spec('a1', 'v2')])).toEqual({ code: 'ok', details: '' });
  const refused = await register(A, [spec('a1', 'v3')]);
  expect(refused.code).toBe(status.RESOURCE_EXHAUSTED);
  expect(refused.details).toMatch(REFUSAL);
  // Nothing of it was registered: the tool is still v2.
  const held = (await app.registry.listTools({}, bearer(A.token))).tools.find((t) => t.name === 'a1');
  expect(held?.inputSchema).toBe(schemaOf('v2'));
  // Nor refused past the budget.
  for (let i = 0; i < 5; i++) expect(await register(A, [spec('a1', 'v2')])).toEqual({ code: 'ok', details: '' });
  // A request with a changed spec beside unchanged ones is charged for the changed one alone, and still refused.
  expect((await register(A, [spec('a1', 'v2'), spec('a2', 'n1')])).details).toMatch(REFUSAL);
  // Another tenant has its own budget.
  expect(await register(B, [spec('b1', 'v1')])).toEqual({ code: 'ok', details: '' });
  expect(await register(B, [spec('b1', 'v2')])).toEqual({ code: 'ok', details: '' });
});

test("a worker's hello compiling past its tenant's budget ends RESOURCE_EXHAUSTED; one hosting its tools unchanged is registered", async () => {
  const t = await startWorkerApp({}, { yaml: 'limits: { max_schema_bytes_compiled_per_minute_per_tenant: 3000 }\n' });
  try {
    const tool = (name: string, variant: string) => ({ name, effect: Effect.READ_ONLY, inputSchema: schemaOf(variant) });
    await t.worker({ id: 'w1', tools: [tool('w_1', 'v1')] });
    const changed = startWorker(t.address, { id: 'w2', tools: [tool('w_1', 'v2')] });
    const ended = await Promise.race([changed.ended, new Promise<{ code: string; details: string }>((resolve) => setTimeout(() => resolve({ code: 'still open after 5 s', details: '' }), 5000).unref())]);
    expect(ended.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(ended.details).toContain('limits.max_schema_bytes_compiled_per_minute_per_tenant');
    expect(ended.details).toMatch(/^tenant "default" would compile 2000 bytes .* try again in \d+ s\./);
    // The same tools again (a reconnection) cost nothing.
    await t.worker({ id: 'w3', tools: [tool('w_1', 'v1')] });
    expect((await t.registry.listTools({})).tools.map((x) => x.inputSchema)).toEqual([schemaOf('v1')]);
  } finally {
    await t.close();
  }
});

test("another replica's schemas are applied past the budget, counted (registrations here then wait) and logged once", () => {
  const warnings: string[] = [];
  const logger = { debug() {}, info() {}, warn: (m: string, f?: object) => warnings.push(`${m} ${JSON.stringify(f)}`), error() {} };
  const registry = createToolRegistry(createSchemaCompiler(65_536), () => new Set(['builtin']), { maxSchemaBytesCompiledPerMinute: 3000, logger });
  const remote = (name: string, variant: string) => create(ToolSpecSchema, spec(name, variant));
  for (const variant of ['v1', 'v2', 'v3']) registry.applyRemote({ type: 'register', tenant: 't', specs: [remote('r1', variant)] });
  expect(registry.lookup('t', 'r1')?.spec.inputSchema).toBe(schemaOf('v3'));
  expect(warnings).toEqual([expect.stringContaining("another replica's registrations took a tenant past its budget of schema bytes compiled here")]);
  expect(() => registry.register([remote('r2', 'v1')], { tenant: 't' })).toThrow(RegistryError);
  // The operator's tools (tenant "") count for nobody.
  for (const variant of ['v1', 'v2', 'v3']) registry.register([remote('op', variant)], { tenant: '', replace: true });
});

test('the budget defaults to twice max_schema_bytes_per_tenant', () => {
  expect(resolveLimits({}).maxSchemaBytesCompiledPerMinutePerTenant).toBe(4 * 1024 * 1024);
  expect(resolveLimits({ maxSchemaBytesPerTenant: 1000 }).maxSchemaBytesCompiledPerMinutePerTenant).toBe(2000);
  expect(resolveLimits({ maxSchemaBytesCompiledPerMinutePerTenant: 10 }).maxSchemaBytesCompiledPerMinutePerTenant).toBe(10);
});
