import * as path from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createMcpConnection, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import type { Logger } from '../../src/log';
import { startApp } from '../helpers/servers';
import { stdioServerYaml } from './mcp-harness';

// A stdio MCP server whose process hangs (its event loop blocked: it answers nothing, pings
// included) is found by the ping sent after a call timed out, dropped and started again: calls
// after it succeed on a new process instead of all timing out until someone restarts it. A real
// @modelcontextprotocol/sdk server in a child process.

jest.setTimeout(30_000);

type AppT = Awaited<ReturnType<typeof startApp>>;
let t: AppT | undefined;
let connection: McpConnection | undefined;
afterEach(async () => {
  await t?.close();
  await connection?.close();
  t = connection = undefined;
});

const run = (app: AppT, name: string, args: string, id: string) => app.dispatch.dispatch({ sessionId: 's', calls: [{ id, name, arguments: args }] }).then((r) => r.results[0]!);
const pidOf = (output: string) => (JSON.parse(output) as { pid: number }).pid;

test('a hung server is pinged after a call times out, dropped, and started again', async () => {
  // The calls below fail until the hung process is dropped (then they wait for the new one, up
  // to reconnect_wait_ms), and each failure counts against stuck_echo's breaker: on a loaded
  // machine that can take long enough for it to open (for 30 s by default), so here it
  // half-opens after 200 ms.
  const policies = 'policies:\n  - match: stuck_echo\n    breaker: { half_open_after_ms: 200 }\n';
  t = await startApp(`mcp_servers:\n  - ${stdioServerYaml('stuck', { timeout_ms: 400, ping_timeout_ms: 300, trusted: true })}\n${policies}`);
  const first = await run(t, 'stuck_echo', '{"text":"a"}', 'c1');
  expect(first.isError).toBe(false);
  const hung = await run(t, 'stuck_hang', '{}', 'c2');
  expect(hung.error?.kind).toBe(ErrorKind.TIMEOUT);

  const deadline = Date.now() + 15_000;
  // Each poll is another call (the same one failing 5 times in a row would be LOOP_BLOCKED).
  let after = await run(t, 'stuck_echo', '{"text":"b3"}', 'c3');
  for (let i = 4; after.isError && Date.now() < deadline; i++) {
    await new Promise((r) => setTimeout(r, 100));
    after = await run(t, 'stuck_echo', `{"text":"b${i}"}`, `c${i}`);
  }
  expect(after.isError).toBe(false);
  expect(pidOf(after.output)).not.toBe(pidOf(first.output));
});

test('a server that is only slow answers the ping and keeps its connection', async () => {
  t = await startApp(`mcp_servers:\n  - ${stdioServerYaml('slowish', { timeout_ms: 300, ping_timeout_ms: 2_000, trusted: true })}\n`);
  const first = await run(t, 'slowish_echo', '{"text":"a"}', 'c1');
  // The call times out; the server, not hung, answers the ping that follows.
  expect((await run(t, 'slowish_slow', '{"ms":1000}', 'c2')).error?.kind).toBe(ErrorKind.TIMEOUT);
  await new Promise((r) => setTimeout(r, 500));
  const after = await run(t, 'slowish_echo', '{"text":"b"}', 'c3');
  expect(after.isError).toBe(false);
  expect(pidOf(after.output)).toBe(pidOf(first.output));
});

const HOSTILE = path.join(__dirname, 'fixtures/hostile-server.js');

// Only an answer to a request in flight proves a server alive: a hung server sending answers to
// ids never used (under the errors' rate) was taken for alive, its ping unanswered, and never dropped.

test.each([
  ['', {}],
  [' while it sends answers to ids never used every 200 ms', { STRAY_MS: '200' }],
])('a server whose calls are stuck is dropped as hung%s', async (_, env) => {
  const drops: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message: string, fields: Record<string, unknown> = {}) => void (message.startsWith('mcp server connection lost') && drops.push(String(fields.reason))),
    error: () => undefined,
  };
  const server = { name: 'h', command: [process.execPath, HOSTILE], env: { MODE: 'stuck', ...env }, ping_timeout_ms: 300, reconnect_initial_ms: 100, reconnect_max_ms: 400 };
  const c = (connection = createMcpConnection(parseMcpServers([server], 'test.yaml')[0]!, { logger, onTools: () => undefined }));
  await c.start();
  expect(c.connected()).toBe(true);
  // The tool's own timeout aborts the call: the server is pinged, and answers nothing more.
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('timed out after 400 ms')), 400);
  const stuck = await c.call('stick', {}, { signal: controller.signal, deadline: Date.now() + 400, timedOut: () => controller.signal.aborted, timeoutMs: 400 }).catch((error: Error) => error);
  expect(stuck).toBeInstanceOf(Error);
  // Dropped ~300 ms after (the ping's timeout); a few answers to ids never used arrive meanwhile.
  const end = Date.now() + 5_000;
  while (drops.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  expect(drops).toHaveLength(1);
  expect(drops[0]).toMatch(/did not answer a ping within 300 ms/);
});
