import { status } from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { parseConfig } from '../../src/config';
import { startApp } from '../helpers/servers';

// The MCP servers are the operator's: their tools are imported under the names and effects the
// config file gives them, and the operator's policies match those names. A tenant registering a
// tool of its own whose executor names one of those servers (`mcp: { server, tool }`) called the
// server's tool under another name, with the effect it chose (a write declared read-only: no
// idempotency record, retried on a timeout) and past every policy matching the imported name
// (`ask` on files_write). Refused unless the operator allows it (registry.allow_tenant_mcp), as
// skip_redaction is; the config file's own tools and other replicas' are not checked here.

const tool = { name: 'my_write', effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'mcp' as const, value: { server: 'files', tool: 'write' } } };

test("a tenant's tool naming an MCP server is refused PERMISSION_DENIED, nothing registered", async () => {
  const d = await startApp('tools: []\n', { env: {} });
  try {
    await expect(d.registry.registerTools({ tools: [tool] })).rejects.toMatchObject({
      code: status.PERMISSION_DENIED,
      details: 'tools[0] ("my_write"): an mcp executor is refused: the MCP servers are the operator\'s, and their tools are shared as the config file declares them (registry.allow_tenant_mcp in the config file lets tenants name them); call the imported tool, or register an http or worker tool',
    });
    expect((await d.registry.listTools({})).tools.map((t) => t.name)).toEqual([]);
  } finally {
    await d.close();
  }
});

test('registry.allow_tenant_mcp: true lets tenants name the MCP servers', async () => {
  const d = await startApp('registry: { allow_tenant_mcp: true }\ntools: []\n', { env: {} });
  try {
    await expect(d.registry.registerTools({ tools: [tool] })).resolves.toMatchObject({ registered: 1 });
  } finally {
    await d.close();
  }
});

test('the setting takes true or false only', () => {
  expect(() => parseConfig('registry:\n  allow_tenant_mcp: "yes"\n', 'd.yaml')).toThrow('d.yaml: registry.allow_tenant_mcp: must be true or false');
  expect(parseConfig('registry:\n  allow_tenant_mcp: false\n', 'd.yaml').registry).toMatchObject({ allowTenantMcp: false });
});
