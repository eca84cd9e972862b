// An MCP server whose tools are named like the operator's config tools (issue 7's import with a
// prefix, issue 10's hostile input): with an empty prefix, an untrusted server listing `echo`
// does not take over the config file's read-only `echo` - calls keep reaching the builtin, and
// ListTools shows it - while its other tools are imported. A tenant then cannot register, nor a
// worker host, a tool named like an imported one.
import * as grpc from '@grpc/grpc-js';
import { startApp } from '../helpers/servers';
import { eventually, startWorker } from '../workers/worker-harness';
import { stdioServerYaml } from '../mcp/mcp-harness';

jest.setTimeout(20_000);

type AppT = Awaited<ReturnType<typeof startApp>>;
let t: AppT;

beforeAll(async () => {
  t = await startApp(`tools:
  - { name: echo, effect: read_only, builtin: { name: echo } }
mcp_servers:
  - ${stdioServerYaml('files', { prefix: '', env: { SERVER_NAME: 'files' } })}
`);
});
afterAll(() => t.close());

const listed = async () => (await t.registry.listTools({})).tools;

test("an MCP tool named like a config tool is not imported; the config tool keeps answering", async () => {
  await eventually(async () => (await listed()).some((x) => x.name === 'write'), 10_000, 'the server tools imported');
  const echo = (await listed()).filter((x) => x.name === 'echo');
  expect(echo.map((x) => x.executor.case)).toEqual(['builtin']);
  const result = (await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'echo', arguments: '{"text":"hi"}' }] })).results[0]!;
  expect([result.isError, result.output]).toEqual([false, '{"text":"hi"}']);
  expect(t.app.deps.registry.lookup('', 'echo')?.spec.executor.case).toBe('builtin');
});

test('a tenant cannot register, nor a worker host, a tool named like an imported MCP tool', async () => {
  const error = await t.registry
    .registerTools({ tools: [{ name: 'write', executor: { case: 'builtin', value: { name: 'echo' } } }], replace: true })
    .catch((e: grpc.ServiceError) => e);
  expect(error).toMatchObject({ code: grpc.status.ALREADY_EXISTS });
  const worker = startWorker(t.address, { id: 'w', tools: [{ name: 'write', inputSchema: '{}' }] });
  expect((await worker.ended).code).toBe(grpc.status.ALREADY_EXISTS);
  expect((await listed()).filter((x) => x.name === 'write').map((x) => x.executor.case)).toEqual(['mcp']);
});
