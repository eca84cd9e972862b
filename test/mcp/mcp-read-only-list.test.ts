import * as path from 'node:path';
import { ConfigError, parseConfig } from '../../src/config';
import { parseMcpServers } from '../../src/executors/mcp';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp } from '../helpers/servers';

// An MCP gateway team's probe: an untrusted server's tools are all side-effecting (replayed for an
// hour, never run in parallel, a cut-off call OUTCOME_UNKNOWN), and the only way to say that its
// search only reads was a config file's tool pinned to it, its schema copied by hand. A server's
// `read_only:` list now says so by name; a name the server does not list is warned of, with the
// listed name it may mean. A real stdio server (raw JSON-RPC) listing fail, ok and meta.

jest.setTimeout(30_000);

const server = (readOnly: unknown) => ({ name: 'codes', command: [process.execPath, path.join(__dirname, 'fixtures/error-code-server.js')], read_only: readOnly });

describe('read_only: on an MCP server', () => {
  let t: Awaited<ReturnType<typeof startApp>>;
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    const record = (message: string, fields: Record<string, unknown> = {}) => void lines.push({ message, fields });
    const logger = { debug() {}, info: record, warn: record, error: record };
    t = await startApp(`mcp_servers:\n  - ${JSON.stringify(server(['ok', 'mta']))}\n`, { logger });
    const deadline = Date.now() + 10_000;
    while (!lines.some((l) => l.message === 'mcp tools imported') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  });
  afterAll(() => t?.close());

  it("imports the named tools read-only and concurrency-safe, the others side-effecting, on an untrusted server", async () => {
    const { tools } = await t.registry.listTools({});
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('codes_ok')).toMatchObject({ effect: Effect.READ_ONLY, concurrencySafe: true });
    expect(byName.get('codes_fail')).toMatchObject({ effect: Effect.SIDE_EFFECT, concurrencySafe: false });
    expect(byName.get('codes_meta')).toMatchObject({ effect: Effect.SIDE_EFFECT });
    const [result] = (await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'codes_ok', arguments: '{}' }] })).results;
    expect(result).toMatchObject({ isError: false, output: 'fine' });
  });

  it('warns of a name the server does not list, with the name it may mean', () => {
    expect(lines).toContainEqual({ message: "mcp server's read_only names a tool the server does not list", fields: { server: 'codes', tool: 'mta', didYouMean: 'meta' } });
    expect(lines.filter((l) => l.message.includes('read_only'))).toHaveLength(1);
  });
});

describe('read_only: in the config', () => {
  const parse = (value: string) => parseMcpServers(parseConfig(`mcp_servers: [ { name: a, command: [x], read_only: ${value} } ]`, 'dispatch.yaml').mcpServers, 'dispatch.yaml');

  it('is a set of names, empty by default', () => {
    expect(parse('[search, fetch]')[0]!.readOnly).toEqual(new Set(['search', 'fetch']));
    expect(parseMcpServers(parseConfig('mcp_servers: [ { name: a, command: [x] } ]', 'dispatch.yaml').mcpServers, 'dispatch.yaml')[0]!.readOnly).toEqual(new Set());
  });

  it.each(['search', '[1]', '[""]', '{ search: true }'])('refuses %s, naming the form', (value) => {
    expect(() => parse(value)).toThrow(new ConfigError('dispatch.yaml', 'mcp_servers[0].read_only', 'must be a list of the tool names the server lists (without the prefix), like [search, fetch]'));
  });
});
