import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, startWorker } from './worker-harness';

// The operator's send_email (config file) must keep answering every call of that name: no worker
// may host it, and no RegisterTools may shadow it, replace or not.
const YAML = `tools:
  - { name: send_email, effect: side_effect, input_schema: '{"type":"object","required":["to"],"properties":{"to":{"type":"string"}},"additionalProperties":false}', builtin: { name: echo } }
`;
const OPERATORS = (where: string) => `${where}: tool "send_email" is the operator's (from the config file or an MCP server); a tenant cannot register, replace or host a tool of that name`;
const builtin = (name: string) => ({ name, inputSchema: '{}', effect: Effect.READ_ONLY, executor: { case: 'builtin' as const, value: { name: 'echo' } } });
const send = (t: WorkerApp) => t.dispatch.dispatch({ sessionId: `s${Math.random()}`, calls: [{ id: 'c1', name: 'send_email', arguments: '{"to":"a@b.c"}' }] }).then((r) => r.results[0]!);
const listed = async (t: WorkerApp) => (await t.registry.listTools({})).tools.map((x) => `${x.name}(${x.executor.case ?? ''})`).sort();

/** The operator's send_email answers, as the config file's echo (not a worker), and is what ListTools shows. */
async function expectOperatorsTool(t: WorkerApp): Promise<void> {
  const result = await send(t);
  expect(result.isError).toBe(false);
  expect(result.output).toBe('{"to":"a@b.c"}');
  expect((await listed(t)).filter((x) => x.startsWith('send_email'))).toEqual(['send_email(builtin)']);
}

describe("the operator's tool names", () => {
  let t: WorkerApp;
  beforeEach(async () => {
    t = await startWorkerApp({}, { yaml: YAML });
  });
  afterEach(() => t.close());

  it("ends the stream of a worker that says hello with a config tool's name, ALREADY_EXISTS, registering none of its tools", async () => {
    const worker = startWorker(t.address, {
      id: 'w',
      tools: [{ name: 'w_ok', inputSchema: '{}' }, { name: 'send_email', effect: Effect.READ_ONLY, inputSchema: '{}' }],
      answer: echoAnswer('w'),
    });
    const status = await worker.ended;
    expect(status.code).toBe(grpc.status.ALREADY_EXISTS);
    expect(status.details).toBe(OPERATORS('tools[1]'));
    await expectOperatorsTool(t);
    expect(worker.assignments).toHaveLength(0);
    expect(await listed(t)).toEqual(['send_email(builtin)']);
  });

  it("refuses RegisterTools of a config tool's name, with replace or not, registering none of the request", async () => {
    for (const replace of [false, true]) {
      const error = await t.registry.registerTools({ tools: [builtin('other'), builtin('send_email')], replace }).catch((e: grpc.ServiceError) => e);
      expect(error).toMatchObject({ code: grpc.status.ALREADY_EXISTS, details: OPERATORS('tools[1]') });
    }
    await expectOperatorsTool(t);
    expect(await listed(t)).toEqual(['send_email(builtin)']);
  });

  it("refuses a worker a name the tenant's tool of another executor holds, and hosts it once that tool is removed", async () => {
    await t.registry.registerTools({ tools: [builtin('mine')] });
    const refused = startWorker(t.address, { id: 'w1', tools: [{ name: 'mine', inputSchema: '{}' }] });
    const status = await refused.ended;
    expect(status.code).toBe(grpc.status.ALREADY_EXISTS);
    expect(status.details).toBe('tools[0]: tool "mine" is already registered with the builtin executor; remove it before a worker hosts it');
    await t.registry.removeTool({ name: 'mine' });
    await t.worker({ id: 'w2', tools: [{ name: 'mine', inputSchema: '{}' }], answer: echoAnswer('w2') });
    expect(await listed(t)).toEqual(['mine(worker)', 'send_email(builtin)']);
  });
});
