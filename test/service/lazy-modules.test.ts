import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp, type TestDispatch } from '../helpers/servers';

// What a dispatch that uses no MCP server, serves no metrics and exports no traces does not load:
// the MCP SDK and zod, OpenTelemetry's metrics SDK and Prometheus exporter, its OTLP/HTTP transport,
// resources and trace SDK; nor undici before its first HTTP call. Loading the app took ~1.3 s of
// CPU with them, ~0.8 s without.

const ROOT = path.join(__dirname, '..', '..');
const LAZY = ['@modelcontextprotocol/sdk', 'zod', '@opentelemetry/exporter-prometheus', '@opentelemetry/sdk-metrics', '@opentelemetry/otlp-exporter-base', '@opentelemetry/otlp-transformer', '@opentelemetry/resources', '@opentelemetry/sdk-trace-base', 'undici'];

/** The packages of LAZY loaded in a new node process once it built the app of `yaml` and ran `then`. */
function loadedPackages(yaml: string, then = ''): string[] {
  const script = `
    const { buildApp } = require('./dist/src/app');
    const { parseConfig } = require('./dist/src/config');
    const { SILENT_LOGGER } = require('./dist/src/log');
    (async () => {
      const app = await buildApp(parseConfig(${JSON.stringify(yaml)}, 'lazy.yaml'), { env: {}, logger: SILENT_LOGGER });
      ${then}
      await app.close();
      const lazy = ${JSON.stringify(LAZY)};
      const files = Object.keys(require.cache);
      console.log(JSON.stringify(lazy.filter((name) => files.some((file) => file.includes('/node_modules/' + name + '/')))));
    })().catch((error) => { console.error(error); process.exit(1); });`;
  const out = execFileSync(process.execPath, ['-e', script], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 20_000 });
  return JSON.parse(out.trim().split('\n').pop()!) as string[];
}

test('an app with no MCP server, metrics or trace export loads none of their packages', () => {
  expect(loadedPackages('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n')).toEqual([]);
}, 30_000);

test('the lazy packages load once they are used: an MCP server configured, traces on, an HTTP call made', () => {
  const yaml = 'mcp_servers:\n  - name: s\n    command: [node, -e, "0"]\ntools: []\n';
  const traces = `require('./dist/src/telemetry').createTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }).shutdown();`;
  // An HTTP tool's call to a closed port: refused, after undici was loaded to make it.
  const http = `await app.deps.executors.get('http').execute({ name: 'h', tenant: '', readOnly: true, timeoutMs: 1000, spec: { executor: { case: 'http', value: { url: 'http://127.0.0.1:9/', headers: {} } } } }, {}, { signal: new AbortController().signal, deadline: Date.now() + 1000, idempotencyKey: 'k', toolCallId: 'c', sessionId: 's', attempt: 1, tenant: '' }).catch(() => undefined);`;
  expect(loadedPackages(yaml, traces + http)).toEqual(expect.arrayContaining(['@modelcontextprotocol/sdk', 'zod', '@opentelemetry/otlp-exporter-base', '@opentelemetry/resources', '@opentelemetry/sdk-trace-base', 'undici']));
}, 30_000);

test('undici loads with the first HTTP tool registered, before its first call (whose timeout its load would eat into)', () => {
  const yaml = 'tools:\n  - name: h\n    effect: read_only\n    input_schema: \'{"type":"object"}\'\n    http: { url: "http://127.0.0.1:8/" }\n';
  expect(loadedPackages(yaml)).toEqual(['undici']);
}, 30_000);

describe('an MCP tool registered by RPC on a dispatch with no mcp_servers', () => {
  let d: TestDispatch;
  beforeAll(async () => {
    d = await startApp('registry: { allow_tenant_mcp: true }\ntools: []\n', { env: {} });
  });
  afterAll(() => d.close());

  test('is refused UNAVAILABLE, naming its server', async () => {
    const tool = { name: 'remote', effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'mcp' as const, value: { server: 's', tool: 't' } } };
    await expect(d.registry.registerTools({ tools: [tool] })).resolves.toMatchObject({ registered: 1 });
    const { results } = await d.dispatch.dispatch({ sessionId: 'lazy', calls: [{ id: 'c', name: 'remote', arguments: '{}' }] });
    expect(results[0]!.isError).toBe(true);
    expect(results[0]!.error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, message: 'MCP server "s" is not configured on this dispatch (add it to mcp_servers)' });
  });
});
