// A tool spec's fields besides its schema are bounded (found in a hunt): nothing bounded a
// description, URL, header, pointer or name, and limits.max_schema_bytes_per_tenant counted input
// schemas only, so 80 tools each with a 3.5 MB description and the schema {"type":"object"} were
// accepted (RSS 139 -> 404 MB) and dispatchd died of heap OOM around the 90th (332 MiB heap); with
// Redis every replica would load them, and OOM again at each restart. Each field now has a bound
// (INVALID_ARGUMENT naming it, its size and the bound), and the rest of a tenant's specs counts,
// apart from their schemas, against max_schema_bytes_per_tenant.
import { create } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { Effect, ToolSpecSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { SILENT_LOGGER } from '../../src/log';
import { createSchemaCompiler, createToolRegistry, RegistryError } from '../../src/registry';
import { startDispatch, type TestDispatch } from '../helpers/servers';
import { startWorkerApp } from '../workers/worker-app';
import { startWorker } from '../workers/worker-harness';

const LIMIT = 400_000;
let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch(`limits:\n  max_schema_bytes_per_tenant: ${LIMIT}\n`);
});
afterAll(() => d.close());

const builtin = { case: 'builtin' as const, value: { name: 'echo' } };
const spec = (name: string, extra: object = {}) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: builtin, ...extra });
const http = (url: string, headers: Record<string, string> = {}) => ({ executor: { case: 'http' as const, value: { url, headers } } });
/** `n` header names, distinct and valid. */
const headerNames = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}`);

test.each([
  [{ description: 'd'.repeat(32_769) }, 'description is 32769 characters, over the limit of 32768'],
  [{ description: '\u{1F600}'.repeat(32_769) }, 'description is 32769 characters, over the limit of 32768'],
  [http(`https://example.com/${'p'.repeat(8192 - 20 + 1)}`), 'http.url is 8193 bytes, over the limit of 8192'],
  [http('https://example.com/', Object.fromEntries(headerNames(65).map((n) => [n, 'v']))), 'http.headers has 65 headers, over the limit of 64'],
  [http('https://example.com/', { ['n'.repeat(257)]: 'v' }), `http.headers name "${'n'.repeat(40)}..." is 257 bytes, over the limit of 256`],
  [http('https://example.com/', { 'x-big': 'é'.repeat(4097) }), 'http.headers "x-big" value is 8194 bytes, over the limit of 8192'],
  [{ resourceKey: `/${'r'.repeat(1024)}` }, 'resource_key is 1025 bytes, over the limit of 1024'],
  [{ primaryParameter: `/${'p'.repeat(1024)}` }, 'primary_parameter is 1025 bytes, over the limit of 1024'],
  [{ idempotency: { keyFields: Array.from({ length: 65 }, (_, i) => `/k${i}`) } }, 'idempotency.key_fields has 65 pointers, over the limit of 64'],
  [{ idempotency: { keyFields: ['/a', `/${'k'.repeat(1024)}`] } }, 'idempotency.key_fields[1] is 1025 bytes, over the limit of 1024'],
  [{ fallbackTool: 'f'.repeat(129) }, 'fallback_tool is 129 characters, over the limit of 128'],
  [{ executor: { case: 'builtin', value: { name: 'b'.repeat(129) } } }, 'builtin.name is 129 characters, over the limit of 128'],
])('a field past its bound is INVALID_ARGUMENT naming it, its size and the bound (%#)', async (extra, message) => {
  await expect(d.registry.registerTools({ tools: [spec('big', extra)] })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: `tools[0]: tool "big": ${message}` });
  expect((await d.registry.listTools({})).tools.map((t) => t.name)).not.toContain('big');
});

test('a spec with every field at its bound is registered, its description as sent', async () => {
  const description = '\u{1F600}'.repeat(32_768);
  const atBounds = spec('at_bounds', {
    description,
    ...http(`https://example.com/${'p'.repeat(8192 - 20)}`, Object.fromEntries(headerNames(64).map((n, i) => [i === 0 ? 'n'.repeat(256) : n, i < 8 ? 'é'.repeat(4096) : 'v']))),
    resourceKey: `/${'r'.repeat(1023)}`,
    primaryParameter: `/${'p'.repeat(1023)}`,
    idempotency: { keyFields: Array.from({ length: 64 }, (_, i) => `/${String(i).padEnd(1023, 'k')}`) },
    fallbackTool: 'f'.repeat(128),
  });
  await expect(d.registry.registerTools({ tools: [atBounds] })).resolves.toMatchObject({ registered: 1 });
  const listed = (await d.registry.listTools({})).tools.find((t) => t.name === 'at_bounds');
  expect(listed?.description).toBe(description);
  expect(listed?.idempotency?.keyFields).toHaveLength(64);
  await d.registry.removeTool({ name: 'at_bounds' });
});

test("a tenant's descriptions count, apart from its schemas, against max_schema_bytes_per_tenant; past it RESOURCE_EXHAUSTED, nothing registered", async () => {
  const described = (name: string) => spec(name, { description: 'd'.repeat(32_000) });
  const twelve = Array.from({ length: 12 }, (_, i) => `d${i + 1}`);
  await expect(d.registry.registerTools({ tools: twelve.map(described) })).resolves.toMatchObject({ registered: 12 });
  const refused = await d.registry.registerTools({ tools: [described('e1'), described('e2')] }).catch((e: { code: number; details: string }) => e);
  expect(refused).toMatchObject({ code: status.RESOURCE_EXHAUSTED });
  const details = (refused as { details: string }).details;
  const bytes = Number(/would have (\d+) bytes/.exec(details)?.[1]);
  // 14 descriptions of 32,000 bytes, with their names, effects and executors.
  expect(bytes).toBeGreaterThan(14 * 32_000);
  expect(bytes).toBeLessThan(14 * 32_100);
  expect(details).toBe(
    `tenant "default" would have ${bytes} bytes of tool specs besides their input schemas (descriptions, URLs, headers...), over the limit of ${LIMIT} ` +
      '(limits.max_schema_bytes_per_tenant, which bounds these and the input schemas apart); remove tools it no longer uses, or make their descriptions shorter',
  );
  expect((await d.registry.listTools({})).tools.map((t) => t.name).sort()).toEqual([...twelve].sort());
  // A replacement counts once; a removal makes room.
  await expect(d.registry.registerTools({ tools: [described('d1')], replace: true })).resolves.toMatchObject({ registered: 1 });
  await d.registry.removeTool({ name: 'd12' });
  await expect(d.registry.registerTools({ tools: [described('e1')] })).resolves.toMatchObject({ registered: 1 });
  // One description of megabytes (the hunt's 3.5 MB), past the tenant's bytes too, is refused for its
  // own bound: INVALID_ARGUMENT, which a client does not retry (a worker retries RESOURCE_EXHAUSTED).
  await expect(d.registry.registerTools({ tools: [spec('huge', { description: 'D'.repeat(3_500_000) })] })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: 'tools[0]: tool "huge": description is 3500000 characters, over the limit of 32768' });
  for (const name of [...twelve.slice(0, 11), 'e1']) await d.registry.removeTool({ name });
});

test('fields a newer client sends that this version does not know count too', async () => {
  const unknown = create(ToolSpecSchema, spec('newer'));
  // Field 999, length-delimited: its length as a varint, then the bytes.
  const length = 450_000;
  const varint = [(length & 0x7f) | 0x80, ((length >> 7) & 0x7f) | 0x80, length >> 14];
  unknown.$unknown = [{ no: 999, wireType: 2, data: new Uint8Array([...varint, ...new Uint8Array(length)]) }];
  await expect(d.registry.registerTools({ tools: [unknown] })).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED, details: expect.stringContaining('bytes of tool specs besides their input schemas') });
  await expect(d.registry.registerTools({ tools: [spec('older')] })).resolves.toMatchObject({ registered: 1 });
});

test("a worker's hello with a description past its bound, or past its tenant's bytes, ends its stream, registering none", async () => {
  const t = await startWorkerApp({}, { yaml: 'limits: { max_schema_bytes_per_tenant: 150000 }\n' });
  try {
    const tool = (name: string, chars: number) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', description: 'w'.repeat(chars) });
    const long = await startWorker(t.address, { id: 'w1', tools: [tool('w_long', 32_769)] }).ended;
    expect(long).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining('tool "w_long": description is 32769 characters, over the limit of 32768') });
    await t.worker({ id: 'w2', tools: [tool('w_1', 30_000), tool('w_2', 30_000), tool('w_3', 30_000)] });
    const over = await startWorker(t.address, { id: 'w3', tools: [tool('w_4', 30_000), tool('w_5', 30_000)] }).ended;
    expect(over).toMatchObject({ code: status.RESOURCE_EXHAUSTED, details: expect.stringContaining('bytes of tool specs besides their input schemas') });
    expect((await t.registry.listTools({})).tools.map((x) => x.name)).toEqual(['w_1', 'w_2', 'w_3']);
  } finally {
    await t.close();
  }
});

test("another replica's tool (through Redis: stored before the bounds, or by an older version) past a field's bound is kept here, logged; an MCP tool's names are bounded", async () => {
  // Refused, such a tool vanished on every upgraded replica while older ones served it, and
  // RemoveTool could not reach it (found in a review). A registration here is refused (above).
  const warned: string[] = [];
  const logger = { ...SILENT_LOGGER, warn: (message: string, fields?: Record<string, unknown>) => void warned.push(`${message}: ${String(fields?.problem)}`) };
  const registry = createToolRegistry(createSchemaCompiler(65_536), () => new Set(['builtin', 'mcp']), { maxSchemaBytesPerTenant: LIMIT, logger });
  const remote = (name: string, description: string): ToolSpec => create(ToolSpecSchema, { ...spec(name), description });
  registry.applyRemote({ type: 'register', tenant: 't', specs: [remote('r1', 'D'.repeat(3_500_000))] });
  await registry.applyRemoteAsync({ type: 'register', tenant: 't', specs: [remote('r2', 'D'.repeat(40_000))] });
  expect(registry.list('t').map((tool) => tool.name).sort()).toEqual(['r1', 'r2']);
  expect(warned).toEqual([
    'a tool from another replica is past a spec field bound and kept; register it again within the bound: description is 3500000 characters, over the limit of 32768',
    'a tool from another replica is past a spec field bound and kept; register it again within the bound: description is 40000 characters, over the limit of 32768',
  ]);
  expect(registry.remove('t', 'r1')).toBe(true);
  expect(() => registry.register([remote('r3', 'D'.repeat(40_000))], { tenant: 't' })).toThrow(new RegistryError('invalid', 'tools[0]: tool "r3": description is 40000 characters, over the limit of 32768'));
  // An MCP tool's names (this server has no MCP servers to register one through RegisterTools).
  const mcp = (server: string, tool: string) => create(ToolSpecSchema, { ...spec('m1'), executor: { case: 'mcp', value: { server, tool } } });
  expect(() => registry.register([mcp('s'.repeat(129), 't')], { tenant: '' })).toThrow('tools[0]: tool "m1": mcp.server is 129 characters, over the limit of 128');
  expect(() => registry.register([mcp('s', 't'.repeat(129))], { tenant: '' })).toThrow('tools[0]: tool "m1": mcp.tool is 129 characters, over the limit of 128');
  expect(registry.register([mcp('s'.repeat(128), 't'.repeat(128))], { tenant: '' })).toHaveLength(1);
  await registry.close();
});

test("the config file's tools have the same bounds: dispatchd names the tool and the field", async () => {
  const yaml = `tools:\n  - name: verbose\n    description: "${'v'.repeat(32_769)}"\n    effect: read_only\n    builtin: { name: echo }\n`;
  await expect(startDispatch(yaml)).rejects.toThrow('tool "verbose": description is 32769 characters, over the limit of 32768');
});
