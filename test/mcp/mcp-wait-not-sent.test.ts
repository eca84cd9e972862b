// A side-effecting call that ends (its tool timeout, or the caller's deadline) while it waits for
// its crashed stdio MCP server to be started again was never sent: it fails as not executed, and
// its idempotency record is released, so the same call after the server is back runs (it was
// OUTCOME_UNKNOWN for the record's TTL, up to an hour, though the server never saw it).
import { create } from '@bufbuild/protobuf';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { RetryPolicySchema } from '../../gen/dispatch/v1/tool_pb';
import { startApp } from '../helpers/servers';
import { callLog } from './mcp-harness';

jest.setTimeout(30_000);

type AppT = Awaited<ReturnType<typeof startApp>>;
const SLOW_RESTART = path.join(__dirname, 'fixtures/slow-restart-server.js');
const SLOW_MS = 2_500;

let t: AppT;
let log: ReturnType<typeof callLog>;
beforeEach(async () => {
  log = callLog();
  const marker = path.join(mkdtempSync(path.join(tmpdir(), 'mcp-slow-')), 'started');
  const server = { name: 'r', command: [process.execPath, SLOW_RESTART], env: { MARKER: marker, SLOW_MS: String(SLOW_MS), CALL_LOG: log.file }, reconnect_initial_ms: 100, reconnect_max_ms: 400, reconnect_wait_ms: 10_000 };
  t = await startApp(`mcp_servers:\n  - ${JSON.stringify(server)}\n`);
  // r_write, never retried, with a tool timeout of 800 ms.
  const spec = t.app.deps.registry.lookup('', 'r_write')!.spec;
  t.app.deps.registry.register([{ ...spec, name: 'w', timeoutMs: 800, retry: create(RetryPolicySchema, { maxAttempts: 1 }) }], { tenant: '' });
  expect((await run('{"text":"warm"}', 'c0')).isError).toBe(false);
  await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'x', name: 'r_crash', arguments: '{}' }] });
});
afterEach(() => t.close());

const run = (args: string, id: string) => t.dispatch.dispatch({ sessionId: 's', calls: [{ id, name: 'w', arguments: args }] }).then((r) => r.results[0]!);
const paid = () => log.lines().filter((line) => line.includes('pay'));

/** The same call once the server is back: it runs, once. */
async function sameCallRunsLater(): Promise<void> {
  // Back once a call of another of its tools (its timeout the default, past reconnect_wait_ms)
  // waits for the reconnection and runs; it was a fixed sleep of SLOW_MS + 1.5 s.
  const back = await t.dispatch.dispatch({ sessionId: 'back', calls: [{ id: 'b', name: 'r_echo', arguments: '{"text":"back"}' }] });
  expect(back.results[0]!.error).toBeUndefined();
  const again = await run('{"text":"pay"}', 'c2');
  expect(again.error).toBeUndefined();
  expect(paid()).toHaveLength(1);
}

test('a call whose tool timeout passes while it waits for the reconnection fails UNAVAILABLE, not executed', async () => {
  const first = await run('{"text":"pay"}', 'c1');
  expect(first.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  // Waiting for the reconnection, or (on a loaded machine, before the crash is seen) refused at once.
  expect(['could not reach the tool within 800 ms; nothing was sent to it', 'MCP server "r" is not connected (it is down or reconnecting); the call was not executed']).toContain(first.error?.message);
  expect(paid()).toHaveLength(0);
  await sameCallRunsLater();
});

test('a call whose RPC deadline passes while it waits for the reconnection was not executed', async () => {
  await expect(t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'w', arguments: '{"text":"pay"}' }] }, { deadlineMs: 500 })).rejects.toThrow();
  expect(paid()).toHaveLength(0);
  await sameCallRunsLater();
});
