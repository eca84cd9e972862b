import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp } from '../helpers/servers';
import { stdioServerYaml } from './mcp-harness';

// A stdio MCP server whose process hangs (its event loop blocked: it answers nothing, pings
// included) is found by the ping sent after a call timed out, dropped and started again: calls
// after it succeed on a new process instead of all timing out until someone restarts it. A real
// @modelcontextprotocol/sdk server in a child process.

jest.setTimeout(30_000);

type AppT = Awaited<ReturnType<typeof startApp>>;
let t: AppT | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
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
