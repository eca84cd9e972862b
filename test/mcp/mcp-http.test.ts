import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp } from '../helpers/servers';
import { eventually } from '../workers/worker-harness';
import { freePort, startHttpMcp, type HttpMcp } from './mcp-harness';

type AppT = Awaited<ReturnType<typeof startApp>>;
const serverYaml = (url: string, extra = '') => `mcp_servers:
  - { name: web, url: "${url}", prefix: "web.", reconnect_initial_ms: 100, reconnect_max_ms: 400${extra} }
`;
const run = (t: AppT, name: string, args: string, id = 'c1') => t.dispatch.dispatch({ sessionId: 's1', calls: [{ id, name, arguments: args }] }).then((r) => r.results[0]!);

/** Records every tool (re)imported into the app's registry. */
function watchImports(t: AppT): string[] {
  const names: string[] = [];
  t.app.deps.registry.onChange((change) => {
    if (change.type === 'register') names.push(...change.specs.map((s) => s.name));
  });
  return names;
}

describe('an MCP server over Streamable HTTP', () => {
  let mcp: HttpMcp;
  let t: AppT;
  let imports: string[];
  beforeAll(async () => {
    mcp = await startHttpMcp();
    t = await startApp(serverYaml(mcp.url, ', trusted: true'));
    imports = watchImports(t);
  });
  afterAll(async () => {
    await t.close();
    await mcp.kill();
  });

  it('imports its tools under the prefix and calls them', async () => {
    const tools = (await t.registry.listTools({})).tools;
    expect(tools.find((x) => x.name === 'web.echo')?.effect).toBe(Effect.READ_ONLY);
    const result = await run(t, 'web.echo', '{"text":"over http"}');
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.output)).toMatchObject({ server: 'http', text: 'over http' });
  });

  it('turns an isError result into a TOOL_ERROR', async () => {
    const result = await run(t, 'web.fail', '{}');
    expect(result.error?.kind).toBe(ErrorKind.TOOL_ERROR);
    expect(result.error?.message).toBe('MCP tool "fail" on server "web" reported an error: the disk is full');
  });

  it('fails DURING when the server dies mid-request, BEFORE while it is down, and reconnects when it is back', async () => {
    const crashed = await run(t, 'web.crash', '{}');
    expect(crashed.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(crashed.attempts).toBe(1);
    expect(crashed.error?.message).toBe('the connection to MCP server "web" was lost mid-request (SSE stream disconnected: TypeError: terminated)');
    const down = await run(t, 'web.write', '{"text":"while down"}');
    expect(down.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(down.error?.message).toBe('MCP server "web" is not connected (it is down or reconnecting); the call was not executed');
    expect(down.attempts).toBe(2);
    const before = imports.length;
    await mcp.restart();
    await eventually(() => imports.slice(before).includes('web.echo'), 10_000, 'the reconnection');
    const back = await run(t, 'web.write', '{"text":"back"}');
    expect(back.isError).toBe(false);
    expect(JSON.parse(back.output)).toMatchObject({ text: 'back' });
  });
});

describe('an MCP server unreachable at start', () => {
  it('is connected with backoff once it comes up, and its tools appear then', async () => {
    const port = await freePort();
    const t = await startApp(serverYaml(`http://127.0.0.1:${port}/mcp`));
    const imports = watchImports(t);
    let mcp: HttpMcp | undefined;
    try {
      expect((await t.registry.listTools({})).tools.some((x) => x.name === 'web.echo')).toBe(false);
      mcp = await startHttpMcp(port);
      await eventually(() => imports.includes('web.echo'), 10_000, 'the first connection');
      const tool = (await t.registry.listTools({})).tools.find((x) => x.name === 'web.echo');
      expect(tool?.effect).toBe(Effect.SIDE_EFFECT);
      expect((await run(t, 'web.echo', '{"text":"late"}')).isError).toBe(false);
    } finally {
      await t.close();
      await mcp?.kill();
    }
  });
});
