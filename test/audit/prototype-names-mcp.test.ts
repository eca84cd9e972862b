// An MCP server's `env:` (stdio) and `headers:` (Streamable HTTP) are mappings of names to values.
// An entry named `__proto__` (the YAML library reads it as an own key) was dropped without a word:
// the entries were copied into a plain `{}`, where assigning `out["__proto__"]` sets the prototype
// (a string is ignored). The server process then ran without the variable. A header of that name
// is refused instead: the HTTP client (undici) would drop it on the wire all the same. `weather` is
// the ordinary name the others must behave like; the real server on port 0 and a stdio MCP server.
import * as path from 'node:path';
import { parseConfig } from '../../src/config';
import { parseMcpServers } from '../../src/executors/mcp';
import { startApp } from '../helpers/servers';

jest.setTimeout(30_000);

const NAMES = ['weather', '__proto__', 'constructor', 'toString'];
const SERVER = path.join(__dirname, 'fixtures/env-named-server.js');

test.each(NAMES)('an env entry named %s is kept in the parsed server', (name) => {
  const config = parseConfig(`mcp_servers:\n  - { name: a, command: [node, s.js], env: { "${name}": "v1" } }\n`, 'test.yaml');
  expect(Object.entries(parseMcpServers(config.mcpServers, 'test.yaml')[0]!.env)).toEqual([[name, 'v1']]);
});

test('a header named __proto__ is refused, naming a case that is sent; constructor is kept', () => {
  const servers = (name: string) => parseMcpServers(parseConfig(`mcp_servers:\n  - { name: b, url: "http://127.0.0.1:1/mcp", headers: { "${name}": "v2" } }\n`, 'test.yaml').mcpServers, 'test.yaml');
  expect(Object.entries(servers('constructor')[0]!.headers)).toEqual([['constructor', 'v2']]);
  expect(() => servers('__proto__')).toThrow('test.yaml: mcp_servers[0].headers.__proto__: is never sent by the HTTP client (it drops a header of exactly that name); write it in another case, such as "__Proto__" (header names ignore case)');
});

test('a stdio server gets its env variable named __proto__, as one named weather', async () => {
  const servers = ['weather', '__proto__'].map((name, i) => `  - { name: s${i}, command: ["${process.execPath}", "${SERVER}"], reconnect_initial_ms: 100, env: { ENV_NAME: "${name}", "${name}": "value-of-${i}" } }\n`).join('');
  const d = await startApp(`mcp_servers:\n${servers}`);
  try {
    const echo = async (tool: string) => {
      for (let i = 0; ; i++) {
        const result = (await d.dispatch.dispatch({ sessionId: 'env', calls: [{ id: 'c', name: tool, arguments: '{"text":"hi"}' }] })).results[0]!;
        if (!result.isError || i >= 100) return JSON.parse(result.output) as { server?: string };
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    expect((await echo('s0_echo')).server).toBe('value-of-0');
    expect((await echo('s1_echo')).server).toBe('value-of-1');
  } finally {
    await d.close();
  }
});
