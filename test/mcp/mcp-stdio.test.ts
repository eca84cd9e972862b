import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp } from '../helpers/servers';
import { eventually } from '../workers/worker-harness';
import { callLog, stdioServerYaml } from './mcp-harness';

type AppT = Awaited<ReturnType<typeof startApp>>;
const log = callLog();
const yaml = `mcp_servers:
  - ${stdioServerYaml('files', { prefix: 'files_', trusted: true, env: { CALL_LOG: log.file, SERVER_NAME: 'files' } })}
  - ${stdioServerYaml('other', { env: { SERVER_NAME: 'other' } })}
`;
const run = (t: AppT, name: string, args: string, id = 'c1', options = {}) => t.dispatch.dispatch({ sessionId: 's1', calls: [{ id, name, arguments: args }] }, options).then((r) => r.results[0]!);

describe('an MCP server over stdio', () => {
  let t: AppT;
  const imports: string[] = [];
  beforeAll(async () => {
    t = await startApp(yaml);
    t.app.deps.registry.onChange((change) => {
      if (change.type === 'register') imports.push(...change.specs.map((spec) => spec.name));
    });
  });
  afterAll(() => t.close());

  it('imports its tools under the prefix, with their input schemas', async () => {
    const tools = (await t.registry.listTools({})).tools;
    const names = tools.map((x) => x.name);
    expect(names).toEqual(expect.arrayContaining(['files_echo', 'files_write', 'files_fail', 'files_crash', 'other_echo']));
    expect(names.some((n) => n.includes('has space'))).toBe(false);
    const echo = tools.find((x) => x.name === 'files_echo')!;
    expect(echo.executor).toMatchObject({ case: 'mcp', value: { server: 'files', tool: 'echo' } });
    expect(JSON.parse(echo.inputSchema)).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect(echo.description).toBe('Echoes its text');
  });

  it("imports a tool whose schema uses a format dispatch does not know, taking it as an annotation (RegisterTools would refuse it)", async () => {
    const result = (await t.dispatch.dispatch({ sessionId: 'dial', calls: [{ id: 'd', name: 'files_dial', arguments: '{"number":"call me maybe"}' }] })).results[0]!;
    expect(result.error).toBeUndefined();
    expect(JSON.parse(result.output)).toMatchObject({ server: 'files' });
  });

  it('sets effects from annotations only for the trusted server', async () => {
    const effect = async (name: string) => (await t.registry.listTools({})).tools.find((x) => x.name === name)!.effect;
    expect(await effect('files_echo')).toBe(Effect.READ_ONLY);
    expect(await effect('files_write')).toBe(Effect.SIDE_EFFECT);
    expect(await effect('files_confused')).toBe(Effect.SIDE_EFFECT);
    expect(await effect('other_echo')).toBe(Effect.SIDE_EFFECT);
  });

  it('calls a tool and returns its text, passing the traceparent in _meta', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const result = await run(t, 'files_echo', '{"text":"hello"}', 'c1', { metadata: { traceparent } });
    expect(result.isError).toBe(false);
    const output = JSON.parse(result.output) as { server: string; text: string; traceparent: string };
    expect(output).toMatchObject({ server: 'files', text: 'hello' });
    expect(output.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-/);
  });

  it('validates arguments against the imported schema before calling the server', async () => {
    const before = log.lines().length;
    const result = await run(t, 'files_echo', '{"text": 5}');
    expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
    expect(log.lines()).toHaveLength(before);
  });

  it('turns an isError result into a TOOL_ERROR, after execution, not retried', async () => {
    const result = await run(t, 'files_fail', '{}');
    expect(result.error?.kind).toBe(ErrorKind.TOOL_ERROR);
    expect(result.error?.message).toBe('MCP tool "fail" on server "files" reported an error: the disk is full');
    expect(result.attempts).toBe(1);
    expect(log.lines().filter((l) => l.startsWith('fail'))).toHaveLength(1);
  });

  it('cancels the request on the server when the tool times out', async () => {
    t.app.deps.registry.register([{ ...(t.app.deps.registry.lookup('', 'files_slow')!.spec), name: 'files_slow_short', timeoutMs: 300 }], { tenant: '' });
    const result = await run(t, 'files_slow_short', '{"ms":5000}');
    expect(result.error?.kind).toBe(ErrorKind.TIMEOUT);
    await eventually(() => log.lines().includes('cancelled'), 5_000, 'the server to see the cancel');
  });

  it('fails a call DURING when the server crashes mid-request, then reconnects to a new process', async () => {
    const pidBefore = (JSON.parse((await run(t, 'files_echo', '{"text":"a"}')).output) as { pid: number }).pid;
    const crashed = await run(t, 'files_crash', '{}');
    expect(crashed.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(crashed.error?.message).toBe('the connection to MCP server "files" was lost mid-request (the server closed it; a stdio server exited or closed its output)');
    expect(crashed.attempts).toBe(1);
    const importsBefore = imports.length;
    await eventually(() => imports.slice(importsBefore).includes('files_echo'), 10_000, 'the reconnection');
    const after = await run(t, 'files_echo', '{"text":"b"}');
    expect(after.isError).toBe(false);
    expect((JSON.parse(after.output) as { pid: number }).pid).not.toBe(pidBefore);
    expect((await run(t, 'files_crash', '{}', 'c9')).error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
  });
});
