import { ConfigError, parseConfig } from '../../src/config';
import { parseMcpServers } from '../../src/executors/mcp';
import { startApp } from '../helpers/servers';

const parse = (yaml: string) => parseMcpServers(parseConfig(yaml, 'dispatch.yaml').mcpServers, 'dispatch.yaml');
const problem = (yaml: string) => {
  try {
    parse(yaml);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('no ConfigError');
};

describe('mcp_servers configuration', () => {
  it('reads a stdio and a Streamable HTTP server with defaults', () => {
    const [files, web] = parse(`mcp_servers:
  - name: files
    command: [node, server.js]
    env: { ROOT: /tmp, DEPTH: 3 }
    prefix: "files_"
  - name: web
    url: http://127.0.0.1:8080/mcp
    headers: { authorization: Bearer x }
    trusted: true
    timeout_ms: 5000
    reconnect_wait_ms: 0
`);
    expect(files).toEqual({ name: 'files', command: ['node', 'server.js'], env: { ROOT: '/tmp', DEPTH: '3' }, cwd: undefined, url: undefined, headers: {}, prefix: 'files_', trusted: false, readOnly: new Set(), timeoutMs: 0, connectTimeoutMs: 10_000, reconnectInitialMs: 500, reconnectMaxMs: 30_000, pingTimeoutMs: 5_000, reconnectWaitMs: 2_000 });
    expect(web).toMatchObject({ name: 'web', url: 'http://127.0.0.1:8080/mcp', headers: { authorization: 'Bearer x' }, prefix: 'web_', trusted: true, timeoutMs: 5_000, reconnectWaitMs: 0 });
  });

  it.each([
    ['mcp_servers: [ { name: a } ]', 'dispatch.yaml: mcp_servers[0]: needs exactly one of command (a stdio server) or url (a Streamable HTTP server)'],
    ['mcp_servers: [ { name: a, command: [x], url: "http://h/mcp" } ]', 'dispatch.yaml: mcp_servers[0]: needs exactly one of command (a stdio server) or url (a Streamable HTTP server)'],
    ['mcp_servers: [ { name: a, command: "node server.js" } ]', 'dispatch.yaml: mcp_servers[0].command: must be a non-empty list of strings, the program first, like [node, server.js]'],
    ['mcp_servers: [ { name: a, url: "ftp://h/mcp" } ]', 'dispatch.yaml: mcp_servers[0].url: must be an http or https URL, got "ftp://h/mcp"'],
    ['mcp_servers: [ { name: a, url: "not a url" } ]', 'dispatch.yaml: mcp_servers[0].url: "not a url" is not a URL (like http://127.0.0.1:8080/mcp)'],
    ['mcp_servers: [ { name: "a b", command: [x] } ]', 'dispatch.yaml: mcp_servers[0].name: must be 1-64 letters, digits, "_", "." or "-"'],
    ['mcp_servers: [ { name: a, command: [x] }, { name: a, command: [y] } ]', 'dispatch.yaml: mcp_servers[1].name: duplicate server name "a"'],
    ['mcp_servers: [ { name: a, command: [x], trusted: "yes" } ]', 'dispatch.yaml: mcp_servers[0].trusted: must be true or false'],
    ['mcp_servers: [ { name: a, command: [x], prefix: "a b" } ]', 'dispatch.yaml: mcp_servers[0].prefix: must be at most 64 letters, digits, "_", ".", ":" or "-" (it starts tool names)'],
    ['mcp_servers: [ { name: a, command: [x], headers: { a: b } } ]', 'dispatch.yaml: mcp_servers[0].headers: applies only to a Streamable HTTP server (url)'],
    ['mcp_servers: [ { name: a, url: "http://h/mcp", env: { a: b } } ]', 'dispatch.yaml: mcp_servers[0].env: applies only to a stdio server (command)'],
    ['mcp_servers: [ { name: a, command: [x], env: { a: [1] } } ]', 'dispatch.yaml: mcp_servers[0].env.a: must be a string, number or boolean'],
    ['mcp_servers: [ { name: a, command: [x], timeout_ms: -1 } ]', 'dispatch.yaml: mcp_servers[0].timeout_ms: must be a positive integer (milliseconds), got -1'],
    ['mcp_servers: [ { name: a, command: [x], reconnect_initial_ms: 500, reconnect_max_ms: 100 } ]', 'dispatch.yaml: mcp_servers[0].reconnect_max_ms: must be at least reconnect_initial_ms (500)'],
    ['mcp_servers: [ { name: a, command: [x], args: [y] } ]', 'dispatch.yaml: mcp_servers[0].args: unknown key "args" (expected one of name, command, env, cwd, url, headers, prefix, trusted, read_only, timeout_ms, connect_timeout_ms, reconnect_initial_ms, reconnect_max_ms, ping_timeout_ms, reconnect_wait_ms)'],
    ['mcp_servers: [ { name: a, command: [x], reconnect_wait_ms: -1 } ]', 'dispatch.yaml: mcp_servers[0].reconnect_wait_ms: must be a non-negative integer (milliseconds), got -1'],
    ['mcp_servers: [ files ]', 'dispatch.yaml: mcp_servers[0]: must be a mapping with name and command or url'],
  ])('rejects %s', (yaml, message) => {
    expect(problem(yaml)).toBe(message);
  });

  it('fails the app at start with the same message', async () => {
    await expect(startApp('mcp_servers: [ { name: a } ]')).rejects.toThrow('test.yaml: mcp_servers[0]: needs exactly one of command (a stdio server) or url (a Streamable HTTP server)');
  });
});
