import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp } from '../helpers/servers';
import { stdioServerYaml } from '../mcp/mcp-harness';
import { startWorkerApp, type WorkerApp } from '../workers/worker-app';
import type { Answer } from '../workers/worker-harness';

// DESIGN section 8: a breaker counts timeouts, executor and transport errors, crashes and 5xx, not
// 4xx answers. An error the tool answered itself (a worker's is_error completion, an MCP tool's
// isError result) is the tool's answer, as a 4xx is: it counted, so one tenant asking a shared
// tool for 5 missing files opened its breaker, and every tenant's valid call failed BREAKER_OPEN.
// A worker that does not answer in time still counts. Real Work streams and a real MCP server
// (@modelcontextprotocol/sdk, stdio) in a child process.

jest.setTimeout(30_000);

describe('worker tools', () => {
  let w: WorkerApp;
  beforeAll(async () => {
    w = await startWorkerApp();
  });
  afterAll(async () => {
    await w?.close();
  });

  let n = 0;
  const call = async (name: string, args: unknown) => (await w.dispatch.dispatch({ sessionId: `s${++n}`, calls: [{ id: 'c', name, arguments: JSON.stringify(args) }] })).results[0]!;
  const kindOf = (result: Awaited<ReturnType<typeof call>>) => (result.error ? ErrorKind[result.error.kind] : 'ok');

  test("a worker's is_error answers do not open the breaker: the 6th call and a valid one still reach the tool", async () => {
    const readFile: Answer = (a) => {
      const { path } = JSON.parse(a.call!.arguments) as { path: string };
      return path === '/exists' ? { output: 'contents' } : { output: `no such file: ${path}`, isError: true };
    };
    const worker = await w.worker({ id: 'files', answer: readFile, tools: [{ name: 'read_file', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY }] });
    for (let i = 1; i <= 6; i++) {
      const r = await call('read_file', { path: `/missing${i}` });
      expect({ i, kind: kindOf(r), message: r.error?.message }).toEqual({ i, kind: 'TOOL_ERROR', message: `tool "read_file" reported an error: no such file: /missing${i}` });
    }
    const valid = await call('read_file', { path: '/exists' });
    expect(valid).toMatchObject({ isError: false, output: 'contents' });
    expect(worker.assignments).toHaveLength(7);
  });

  test('a worker that does not answer in time still counts: 5 timeouts open the breaker', async () => {
    const worker = await w.worker({ id: 'silent', answer: () => undefined, tools: [{ name: 'stuck', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 200, retry: { maxAttempts: 1 } }] });
    const kinds = [];
    for (let i = 1; i <= 6; i++) kinds.push(kindOf(await call('stuck', { i })));
    expect(kinds).toEqual(['TIMEOUT', 'TIMEOUT', 'TIMEOUT', 'TIMEOUT', 'TIMEOUT', 'BREAKER_OPEN']);
    expect(worker.assignments).toHaveLength(5);
  });
});

test("an MCP tool's isError answers do not open the breaker: the 6th call still reaches the tool", async () => {
  const d = await startApp(`mcp_servers:\n  - ${stdioServerYaml('m', { trusted: true })}\n`);
  try {
    for (let i = 1; i <= 6; i++) {
      const r = (await d.dispatch.dispatch({ sessionId: `s${i}`, calls: [{ id: 'c', name: 'm_fail', arguments: JSON.stringify({ i }) }] })).results[0]!;
      expect({ i, kind: ErrorKind[r.error!.kind], message: r.error!.message }).toEqual({ i, kind: 'TOOL_ERROR', message: 'MCP tool "fail" on server "m" reported an error: the disk is full' });
    }
  } finally {
    await d.close();
  }
});
