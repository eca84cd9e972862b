// Found in review: any tenant with the admin scope could register a tool declaring skip_redaction
// (ToolSpec field 21) and so turn off, for what its tools read back (a service inside the allowed
// ranges, say), the redaction the operator answers for (DESIGN section 9). Now only the operator's
// tools (the config file's) may declare it, unless the config file sets
// registry.allow_tenant_skip_redaction: true. Through the real gRPC RegisterTools and a worker's hello.
import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { parseConfig } from '../../src/config';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { startWorkerApp } from '../workers/worker-app';
import { startWorker } from '../workers/worker-harness';

const LEAKY = 'password: hunter2hunter2 token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB';
const REDACTED = 'password: [REDACTED:secret] token [REDACTED:github_token]';
const refusal = (where: string, name: string) =>
  `${where} ("${name}"): skip_redaction is refused: this deployment does not let tenants turn redaction off (registry.allow_tenant_skip_redaction in the config file); declare the tool in the config file, or ask the operator`;

let tools: ToolServer;
let closed: TestDispatch;
let allowed: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/leaky': (_req, res) => void res.writeHead(200).end(LEAKY) });
  const operatorTool = `tools:\n  - { name: operator_ids, effect: read_only, skip_redaction: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/leaky" } }\n`;
  closed = await startApp(operatorTool);
  allowed = await startApp(`${operatorTool}registry:\n  allow_tenant_skip_redaction: true\n`);
});
afterAll(async () => {
  await Promise.all([closed, allowed].map((d) => d?.close()));
  await tools?.close();
});

const httpTool = (name: string, skipRedaction: boolean) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', skipRedaction, executor: { case: 'http' as const, value: { url: `${tools.url}/leaky`, headers: {} } } });
const run = async (d: TestDispatch, name: string) => (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name, arguments: '{}' }] })).results[0]!.output;

test('by default a tenant\'s RegisterTools with skip_redaction is PERMISSION_DENIED, naming the setting; nothing of the request is registered', async () => {
  const error = await closed.registry.registerTools({ tools: [httpTool('plain', false), httpTool('ids', true)] }).catch((e: grpc.ServiceError) => e);
  expect(error).toMatchObject({ code: grpc.status.PERMISSION_DENIED, details: refusal('tools[1]', 'ids') });
  expect((await closed.registry.listTools({})).tools.map((t) => t.name)).toEqual(['operator_ids']);
  // Without it the tenant's tool registers, and its output is redacted.
  await closed.registry.registerTools({ tools: [httpTool('plain', false)] });
  expect(await run(closed, 'plain')).toBe(REDACTED);
});

test("the operator's config-file tool may declare it whatever the setting", async () => {
  expect(await run(closed, 'operator_ids')).toBe(LEAKY);
  expect(await run(allowed, 'operator_ids')).toBe(LEAKY);
});

test('registry.allow_tenant_skip_redaction: true lets a tenant register such a tool, which answers unredacted', async () => {
  expect((await allowed.registry.registerTools({ tools: [httpTool('ids', true)] })).registered).toBe(1);
  expect(await run(allowed, 'ids')).toBe(LEAKY);
});

test("a worker's hello hosting a skip_redaction tool ends PERMISSION_DENIED by default, registering none of its tools", async () => {
  const t = await startWorkerApp();
  try {
    const worker = startWorker(t.address, { id: 'w', tools: [{ name: 'w_ok', inputSchema: '{}' }, { name: 'w_ids', inputSchema: '{}', skipRedaction: true }] });
    const status = await worker.ended;
    expect(status.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(status.details).toBe(refusal('tools[1]', 'w_ids'));
    expect((await t.registry.listTools({})).tools).toEqual([]);
  } finally {
    await t.close();
  }
});

test('the setting takes true or false only', () => {
  expect(() => parseConfig('registry:\n  allow_tenant_skip_redaction: "yes"\n', 'd.yaml')).toThrow('d.yaml: registry.allow_tenant_skip_redaction: must be true or false');
  expect(() => parseConfig('registry:\n  allow_tenant_skip_redactoin: true\n', 'd.yaml')).toThrow('d.yaml: registry.allow_tenant_skip_redactoin: unknown key "allow_tenant_skip_redactoin" (did you mean allow_tenant_skip_redaction?)');
});
