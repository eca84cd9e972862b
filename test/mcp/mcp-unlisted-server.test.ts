import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { closedPort, startApp } from '../helpers/servers';
import { until } from '../helpers/until';
import { startHttpMcp, type HttpMcp } from './mcp-harness';

// A call of a tool of an MCP server that has not connected since dispatchd started: its tools were
// never listed, so the name matches nothing. The UNKNOWN_TOOL message names the server (and, when
// the name has its prefix, says the tool would be one of its tools) instead of reading as a name
// the model made up; once the server connects and its tools are listed, the message is as before.
// A real @modelcontextprotocol/sdk server in a child process, started on the port dispatch retries.

jest.setTimeout(30_000);

let t: Awaited<ReturnType<typeof startApp>> | undefined;
let http: HttpMcp | undefined;
afterAll(async () => {
  await t?.close();
  await http?.kill();
});

const run = (name: string, id: string, args = '{}') => t!.dispatch.dispatch({ sessionId: 's', calls: [{ id, name, arguments: args }] }).then((r) => r.results[0]!);

test('a tool of an MCP server not connected yet is refused naming the server, until its tools are listed', async () => {
  const port = await closedPort();
  t = await startApp(`mcp_servers:\n  - { name: web, url: "http://127.0.0.1:${port}/mcp", prefix: "web.", trusted: true, reconnect_initial_ms: 100, reconnect_max_ms: 200 }\n`);

  const prefixed = await run('web.echo', 'c1');
  expect(prefixed.error?.kind).toBe(ErrorKind.UNKNOWN_TOOL);
  expect(prefixed.error?.message).toBe('tool "web.echo" not found: it would be one of MCP server "web"\'s tools (named web.*), which has not connected yet, so its tools are not known');
  expect(JSON.parse(prefixed.output).suggestion).toBe('Try it again later, or do without it. No tool is available: answer without calling tools.');

  const other = await run('search', 'c2');
  expect(other.error?.kind).toBe(ErrorKind.UNKNOWN_TOOL);
  expect(other.error?.message).toBe('tool "search" not found; MCP server "web" has not connected yet, and its tools are not known');

  http = await startHttpMcp(port);
  await until(() => t!.app.deps.registry.lookup('', 'web.echo'), 'the server\'s tools to be listed');
  const listed = await run('web.nope', 'c3');
  expect(listed.error?.kind).toBe(ErrorKind.UNKNOWN_TOOL);
  expect(listed.error?.message).toMatch(/^tool "web\.nope" not found; did you mean "web\.[a-z]+"\?$/);
  expect((await run('web.echo', 'c4', '{"text":"a"}')).error).toBeUndefined();
});

test('servers past the third are counted, not named', async () => {
  const ports = await Promise.all([0, 1, 2, 3].map(() => closedPort()));
  const servers = ports.map((port, i) => `  - { name: s${i}, url: "http://127.0.0.1:${port}/mcp", trusted: true, reconnect_initial_ms: 5000 }`).join('\n');
  const app = await startApp(`mcp_servers:\n${servers}\n`);
  try {
    const result = (await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'search', arguments: '{}' }] })).results[0]!;
    expect(result.error?.message).toBe('tool "search" not found; MCP server "s0", MCP server "s1", MCP server "s2" (and 1 more) have not connected yet, and their tools are not known');
  } finally {
    await app.close();
  }
});
