import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDaemon } from '../helpers/daemon';
import { startApp } from '../helpers/servers';
import { failedStart } from '../helpers/startup-line';

const tool = (server: string) => `tools:
  - name: search
    effect: read_only
    input_schema: '{"type":"object"}'
    mcp: { server: ${server}, tool: x }
`;

// Such a tool started, and failed every call UNAVAILABLE ("not configured on this dispatch").
describe('a config-file tool naming an MCP server', () => {
  it('is refused at start when no server is configured', async () => {
    await expect(startApp(tool('nosuch'))).rejects.toThrow('test.yaml: tools[0].mcp.server: no server "nosuch" in mcp_servers (none is configured)');
  });

  it('is refused at start when the server is not among those configured, naming them', async () => {
    const yaml = `${tool('nosuch')}mcp_servers:
  - { name: files, command: [node, server.js] }
  - { name: web, url: "http://127.0.0.1:9/mcp" }
`;
    await expect(startApp(yaml)).rejects.toThrow('test.yaml: tools[0].mcp.server: no server "nosuch" in mcp_servers (configured: files, web)');
  });

  it('makes dispatchd exit non-zero with the message', async () => {
    const file = join(tmpdir(), `mcp-missing-${process.pid}.yaml`);
    writeFileSync(file, tool('nosuch'));
    const failure = failedStart(await runDaemon(['--listen', '127.0.0.1:0', '--config', file]));
    expect(failure).toEqual({ exit: 1, level: 'error', code: 'invalid_config', message: expect.stringContaining(`${file}: tools[0].mcp.server: no server "nosuch" in mcp_servers (none is configured)`) });
  });
});
