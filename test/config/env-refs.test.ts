import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDispatchClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { withEnv } from '../../src/config/env-refs';
import { parseMcpServers } from '../../src/executors/mcp/mcp-config';
import { runDaemon, startDaemon } from '../helpers/daemon';
import { json, startToolServer } from '../helpers/servers';

// Found by a user probe: a tool file had no way to keep an HTTP tool's token out of the file: under
// Helm the config is a ConfigMap, and `authorization: "Bearer ${TOKEN}"` was sent as written. So
// was an MCP server's env and headers. `${NAME}` in those fields is now read from the environment.

const ENV = { TOOL_TOKEN: 's3cr3t-token', TOOL_HOST: 'http://127.0.0.1:8081', EMPTY: '' };

test('withEnv reads ${NAME}, keeps $${ as ${, and refuses a name not set or set empty, and a ${ with no name', () => {
  expect(withEnv('Bearer ${TOOL_TOKEN}', 'f.yaml', 'p', ENV)).toBe('Bearer s3cr3t-token');
  expect(withEnv('${TOOL_HOST}/x?a=${TOOL_TOKEN}', 'f.yaml', 'p', ENV)).toBe('http://127.0.0.1:8081/x?a=s3cr3t-token');
  expect(withEnv('cost: $5, literal $${TOOL_TOKEN}', 'f.yaml', 'p', ENV)).toBe('cost: $5, literal ${TOOL_TOKEN}');
  expect(() => withEnv('Bearer ${MISSING_X}', 'f.yaml', 'tools[0].http.headers.authorization', ENV)).toThrow(
    'f.yaml: tools[0].http.headers.authorization: ${MISSING_X} names a variable not set in the environment',
  );
  expect(() => withEnv('${EMPTY}', 'f.yaml', 'p', ENV)).toThrow('${EMPTY} names a variable set empty');
  expect(() => withEnv('${1BAD}', 'f.yaml', 'p', ENV)).toThrow('holds a "${" that names no variable');
});

describe('in a config file', () => {
  const saved = { ...process.env };
  beforeEach(() => Object.assign(process.env, ENV));
  afterEach(() => {
    for (const key of Object.keys(ENV)) delete process.env[key];
    Object.assign(process.env, saved);
  });

  it("reads an HTTP tool's url and headers, and nothing else of the tool", () => {
    const { tools } = parseConfig(
      'tools:\n  - name: t\n    description: "uses ${TOOL_TOKEN}"\n    effect: read_only\n    http: { url: "${TOOL_HOST}/weather", headers: { authorization: "Bearer ${TOOL_TOKEN}" } }\n',
      'c.yaml',
    );
    const http = tools[0]!.executor.case === 'http' ? tools[0]!.executor.value : undefined;
    expect(http?.url).toBe('http://127.0.0.1:8081/weather');
    expect(http?.headers).toEqual({ authorization: 'Bearer s3cr3t-token' });
    expect(tools[0]!.description).toBe('uses ${TOOL_TOKEN}');
  });

  it("reads an MCP server's env, headers and url", () => {
    const [stdio, remote] = parseMcpServers(
      [
        { name: 'gh', command: ['node', 'server.js'], env: { GITHUB_TOKEN: '${TOOL_TOKEN}', DEPTH: 3 } },
        { name: 'web', url: '${TOOL_HOST}/mcp', headers: { authorization: 'Bearer ${TOOL_TOKEN}' } },
      ],
      'c.yaml',
    );
    expect({ ...stdio!.env }).toEqual({ GITHUB_TOKEN: 's3cr3t-token', DEPTH: '3' });
    expect(remote!.url).toBe('http://127.0.0.1:8081/mcp');
    expect({ ...remote!.headers }).toEqual({ authorization: 'Bearer s3cr3t-token' });
    expect(() => parseMcpServers([{ name: 'gh', command: ['node'], env: { T: '${NOPE_NOT_SET}' } }], 'c.yaml')).toThrow('c.yaml: mcp_servers[0].env.T: ${NOPE_NOT_SET} names a variable not set');
  });
});

describe('dispatchd', () => {
  const dir = mkdtempSync(join(tmpdir(), 'env-refs-'));
  const config = (url: string) => {
    const path = join(dir, 'tools.yaml');
    writeFileSync(path, `tools:\n  - name: weather\n    effect: read_only\n    http: { url: "${url}", headers: { authorization: "Bearer \${WEATHER_TOKEN}" } }\n`);
    return path;
  };

  it('sends the header read from its environment', async () => {
    const tools = await startToolServer({ '/weather': json({ temp: 21 }) });
    const daemon = await startDaemon(['--config', config(`${tools.url}/weather`)], { WEATHER_TOKEN: 'from-a-secret' });
    const client = createDispatchClient(`127.0.0.1:${daemon.port}`);
    try {
      const { results } = await client.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'weather', arguments: '{}' }] });
      expect(results[0]!.isError).toBe(false);
      expect(tools.received[0]!.headers.authorization).toBe('Bearer from-a-secret');
    } finally {
      client.close();
      daemon.child.kill('SIGTERM');
      await daemon.exited;
      await tools.close();
    }
  });

  it('exits 1 naming the field and the variable when it is not set, not showing any value', async () => {
    const { code, stderr } = await runDaemon(['--config', config('http://127.0.0.1:8/weather'), '--listen', '127.0.0.1:0'], { WEATHER_TOKEN: '' });
    expect(code).toBe(1);
    expect(stderr).toContain('tools[0].http.headers.authorization: ${WEATHER_TOKEN} names a variable set empty in the environment');
  });
});
