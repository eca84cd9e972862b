import { create } from '@bufbuild/protobuf';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { RetryPolicySchema } from '../../gen/dispatch/v1/tool_pb';
import { startApp } from '../helpers/servers';
import { startHttpMcp, stdioServerYaml, type HttpMcp } from './mcp-harness';

// A call that arrives while its MCP server is being connected again waits for the connection
// (up to reconnect_wait_ms, within its deadline) instead of failing UNAVAILABLE at once, so a
// short restart costs the caller a delay, not an error and a breaker count; while the next
// attempt is further off, calls fail at once. Real @modelcontextprotocol/sdk servers in child
// processes; the calls are to copies of the imported tools that are never retried, so that
// each call is one attempt.

jest.setTimeout(30_000);

type AppT = Awaited<ReturnType<typeof startApp>>;
let t: AppT | undefined;
let http: HttpMcp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  await http?.kill();
  http = undefined;
});

/** Registers `name`1: the imported tool `name`, on the same server, never retried. */
function once(app: AppT, name: string): string {
  const spec = app.app.deps.registry.lookup('', name)!.spec;
  app.app.deps.registry.register([{ ...spec, name: `${name}1`, retry: create(RetryPolicySchema, { maxAttempts: 1 }) }], { tenant: '' });
  return `${name}1`;
}
const run = (app: AppT, name: string, args: string, id: string) => app.dispatch.dispatch({ sessionId: 's', calls: [{ id, name, arguments: args }] }).then((r) => r.results[0]!);
const pidOf = (output: string) => (JSON.parse(output) as { pid: number }).pid;

test('a call made while a crashed stdio server is started again waits and runs on the new process', async () => {
  t = await startApp(`mcp_servers:\n  - ${stdioServerYaml('r', { trusted: true, reconnect_wait_ms: 10_000 })}\n`);
  const echo = once(t, 'r_echo');
  const first = await run(t, echo, '{"text":"a"}', 'c1');
  expect(first.isError).toBe(false);
  expect((await run(t, 'r_crash', '{}', 'c2')).error?.kind).toBe(ErrorKind.UNAVAILABLE);
  // At once: the connection is dropped and the new process is not started yet.
  const after = await run(t, echo, '{"text":"b"}', 'c3');
  expect(after.error).toBeUndefined();
  expect(after.attempts).toBe(1);
  expect(pidOf(after.output)).not.toBe(pidOf(first.output));
});

test('with reconnect_wait_ms 0 the same call fails at once, not executed', async () => {
  t = await startApp(`mcp_servers:\n  - ${stdioServerYaml('r', { trusted: true, reconnect_wait_ms: 0 })}\n`);
  const echo = once(t, 'r_echo');
  expect((await run(t, echo, '{"text":"a"}', 'c1')).isError).toBe(false);
  expect((await run(t, 'r_crash', '{}', 'c2')).error?.kind).toBe(ErrorKind.UNAVAILABLE);
  const after = await run(t, echo, '{"text":"b"}', 'c3');
  expect(after.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(after.error?.message).toMatch(/is not connected/);
});

test('while the next attempt is further off than reconnect_wait_ms, calls fail at once; once it is nearer, they wait for it', async () => {
  http = await startHttpMcp();
  t = await startApp(`mcp_servers:\n  - { name: web, url: "${http.url}", prefix: "web.", trusted: true, reconnect_initial_ms: 4000, reconnect_max_ms: 4000, reconnect_wait_ms: 3000 }\n`);
  const echo = once(t, 'web.echo');
  expect((await run(t, echo, '{"text":"a"}', 'c1')).isError).toBe(false);
  await http.kill();
  // The first call after the kill finds the server gone and drops the connection (or the lost
  // event stream already did): the next attempt is 4-4.8 s (reconnect_initial_ms + jitter) away.
  expect((await run(t, echo, '{"text":"b"}', 'c2')).error?.kind).toBe(ErrorKind.UNAVAILABLE);
  const dropped = Date.now();
  const refused = await run(t, echo, '{"text":"c"}', 'c3');
  expect(refused.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(refused.error?.message).toMatch(/is not connected/);
  expect(Date.now() - dropped).toBeLessThan(1_000);

  // 3 s after the drop the attempt is at most 1.8 s away: a call waits for it.
  await http.restart();
  await new Promise((r) => setTimeout(r, dropped + 3_000 - Date.now()));
  const waited = Date.now();
  const after = await run(t, echo, '{"text":"d"}', 'c4');
  expect(after.error).toBeUndefined();
  expect(Date.now() - waited).toBeGreaterThan(500);
});
