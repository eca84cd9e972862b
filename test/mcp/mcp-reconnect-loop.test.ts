import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createMcpConnection, parseMcpServers, resultText, type McpConnection } from '../../src/executors/mcp';
import { SILENT_LOGGER } from '../../src/log';
import { FLAKY_SERVER, isAlive, startedIn } from './mcp-harness';

// A connection runs one reconnection loop at a time and owns the processes it starts: a stdio
// server that exits while its tools are listed (after the client connected) was reconnected by
// two loops, which then multiplied with every failure, left two server processes running for
// one connection, and a process alive after close(). Real @modelcontextprotocol/sdk servers in
// child processes (the flaky fixture records each start in a directory, by pid).

jest.setTimeout(30_000);

let connection: McpConnection | undefined;
let dir = '';
afterEach(async () => {
  await connection?.close();
  connection = undefined;
  // Whatever a failing test left running.
  for (const { pid } of startedIn(dir)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
});

/** A connection to the flaky fixture crashing `crash`, reconnecting every `backoffMs` (no growth). */
function open(crash: 'once' | 'always', backoffMs: number): McpConnection {
  dir = mkdtempSync(path.join(tmpdir(), 'mcp-flaky-'));
  const server = { name: 'flaky', command: [process.execPath, FLAKY_SERVER], env: { PID_DIR: dir, CRASH: crash }, reconnect_initial_ms: backoffMs, reconnect_max_ms: backoffMs, reconnect_wait_ms: 0 };
  connection = createMcpConnection(parseMcpServers([server], 'test.yaml')[0]!, { logger: SILENT_LOGGER, onTools: () => undefined });
  return connection;
}

const alive = () => startedIn(dir).filter((s) => isAlive(s.pid)).map((s) => s.pid);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(50);
  return check();
}

test('a server that exits on its first tools/list is started again once: one process runs, and calls run on it', async () => {
  const c = open('once', 200);
  await c.start();
  expect(await until(() => c.connected(), 10_000)).toBe(true);
  // Past the next attempt of a second loop, had one been started.
  await sleep(1_500);
  expect(startedIn(dir)).toHaveLength(2);
  const running = alive();
  expect(running).toHaveLength(1);
  const result = await c.call('echo', { text: 'a' }, { signal: new AbortController().signal, deadline: Date.now() + 5_000 });
  expect(result.isError).toBeFalsy();
  expect((JSON.parse(resultText(result)) as { pid: number }).pid).toBe(running[0]);
});

test('a server that exits on every tools/list is started again by one loop, no sooner than its backoff', async () => {
  const c = open('always', 300);
  const began = Date.now();
  await c.start();
  // Three starts, however long a loaded machine takes to start a process (a clean-clone CI run
  // saw two within 3 s).
  expect(await until(() => startedIn(dir).length >= 3, 10_000)).toBe(true);
  const starts = startedIn(dir);
  // Each start is recorded before the process fails, and the next one follows that failure by
  // the backoff (300-360 ms) plus a process start: one loop starts at most 1 + elapsed / 300.
  expect(starts.length).toBeLessThanOrEqual(1 + Math.floor((Date.now() - began) / 300));
  const gaps = starts.slice(1).map((s, i) => s.at - starts[i]!.at);
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(300);
});

test.each(['once', 'always'] as const)('close() stops the loop and returns once no process of the server runs (crash %s)', async (crash) => {
  const c = open(crash, 100);
  await c.start();
  // Started again at least once (crash once: and connected to that process), where it was a fixed
  // 1.5 s (~10 backoffs): close() meets the loop still running (always) or the connection it made (once).
  expect(await until(() => startedIn(dir).length >= 2 && (crash === 'always' || c.connected()), 10_000)).toBe(true);
  const closing = Date.now();
  await c.close();
  // The SDK closes stdin, then sends SIGTERM after 2 s and SIGKILL after 2 s more.
  expect(Date.now() - closing).toBeLessThan(6_000);
  expect(alive()).toEqual([]);
  const started = startedIn(dir).length;
  await sleep(1_000);
  expect(startedIn(dir)).toHaveLength(started);
  expect(alive()).toEqual([]);
});

// A stdio server that answers initialize and tools/list, then exits (a crash a moment after
// start: a setting read late, a failing background task) is started again with a backoff that
// grows, as one failing to connect is. A connection that got as far as its tools reset the backoff
// at once, so the crash loop restarted the server every reconnect_initial_ms (500 ms by default)
// for as long as dispatch ran, re-importing its tools each time: a process start (for a Python
// server, most of a core's second) twice a second. Real @modelcontextprotocol/sdk servers in child
// processes; the flaky fixture records each start.
test('a server exiting 300 ms after each start is started again ever more slowly, up to reconnect_max_ms', async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcp-crashloop-'));
  // The flaky fixture (CRASH unset: it lists its tools), exiting 300 ms after it starts.
  const script = `require(${JSON.stringify(FLAKY_SERVER)}); setTimeout(() => process.exit(3), 300);`;
  const server = { name: 'crashy', command: [process.execPath, '-e', script], env: { PID_DIR: dir }, reconnect_initial_ms: 100, reconnect_max_ms: 1_600, reconnect_wait_ms: 0 };
  let imports = 0;
  connection = createMcpConnection(parseMcpServers([server], 'test.yaml')[0]!, { logger: SILENT_LOGGER, onTools: () => void imports++ });
  await connection.start();
  expect(imports).toBe(1);
  const gaps = () => {
    const starts = startedIn(dir);
    return starts.slice(1).map((s, i) => s.at - starts[i]!.at);
  };
  // Until two starts are reconnect_max_ms apart, 8 s at most (no sooner than ~5.4 s: the fifth gap).
  await until(() => Math.max(0, ...gaps()) >= 1_600, 8_000);
  const starts = startedIn(dir);
  // Backoff 100, 200, 400, 800, 1,600 ms (+ up to 20%) after each ~300 ms life: 6 starts until
  // the first two reconnect_max_ms apart (about 7 in 8 s). It was a start every ~0.45 s, never
  // 1,600 ms apart: 17-18 in the 8 s waited for that.
  expect(starts.length).toBeLessThanOrEqual(9);
  expect(Math.max(...gaps())).toBeGreaterThanOrEqual(1_600);
});
