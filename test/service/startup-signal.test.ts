import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeRedisPort } from '../helpers/redis-server';
import { until } from '../helpers/until';

// A stop signal while dispatchd starts (waiting up to 5 s for Redis, starting MCP servers) stops
// the start-up and exits at once, closing what was started. As PID 1 in a container without an
// init, a signal with no handler yet is ignored: the pod waited out its whole grace period.
// Real dispatchd processes (bin/dispatchd.js: `npm run build` first).

jest.setTimeout(30_000);

const BIN = join(__dirname, '..', '..', 'bin', 'dispatchd.js');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dispatch-startup-signal-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Started {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  /** Exit code and signal, with the ms from `since` (set when the signal is sent) to the exit. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  sent(): void;
}

/** Spawns dispatchd (behind `prefix`, e.g. unshare) on 127.0.0.1:0. */
function spawnDaemon(args: string[], prefix: string[] = []): Started {
  const command = [...prefix, process.execPath, BIN, '--listen', '127.0.0.1:0', ...args];
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let since = Date.now();
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, ms: Date.now() - since })),
  );
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  void exited.then(() => clearTimeout(killer));
  return { child, stderr: () => stderr, exited, sent: () => (since = Date.now()) };
}

/** A loopback port with nothing listening: start-up waits its 5 s for Redis there. */
const closedRedisUrl = async () => `redis://127.0.0.1:${await freeRedisPort()}`;
const waitingForRedis = (d: Started) => until(() => (/"redis (error|connection lost)/.test(d.stderr()) ? true : undefined), 'dispatchd to try Redis');

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test.each(['SIGTERM', 'SIGINT'] as const)('%s while start-up waits for Redis exits within a second, with 0', async (signal) => {
  const daemon = spawnDaemon(['--redis', await closedRedisUrl()]);
  await waitingForRedis(daemon);
  daemon.sent();
  daemon.child.kill(signal);
  const { code, signal: killedBy, ms } = await daemon.exited;
  expect({ code, killedBy }).toEqual({ code: 0, killedBy: null });
  expect(ms).toBeLessThan(1_000);
  expect(daemon.stderr()).toContain(`"message":"stopped during start-up"`);
  expect(daemon.stderr()).toContain(`"signal":"${signal}"`);
  expect(daemon.stderr()).not.toContain('dispatchd serving');
});

// node as PID 1 of its own PID namespace, as in a container without an init: the kernel ignores a
// signal PID 1 has no handler for.
const pidNamespaces = spawnSync('unshare', ['--pid', '--fork', 'true']).status === 0;
(pidNamespaces ? test : test.skip)('as PID 1 (a container without an init), SIGTERM during start-up is not ignored', async () => {
  const daemon = spawnDaemon(['--redis', await closedRedisUrl()], ['unshare', '--pid', '--fork', '--kill-child']);
  await waitingForRedis(daemon);
  const node = Number(readFileSync(`/proc/${daemon.child.pid}/task/${daemon.child.pid}/children`, 'utf8').trim());
  expect(readFileSync(`/proc/${node}/status`, 'utf8')).toMatch(/^NSpid:\s+\d+\s+1$/m);
  daemon.sent();
  process.kill(node, 'SIGTERM');
  const { code, ms } = await daemon.exited;
  expect(code).toBe(0);
  expect(ms).toBeLessThan(1_000);
  expect(daemon.stderr()).toContain('stopped during start-up');
});

test('SIGTERM while an MCP server starts closes that server and exits within a second', async () => {
  const pidFile = join(dir, 'mcp.pid');
  // An MCP stdio server that never answers `initialize` (start-up waits for it, up to
  // connect_timeout_ms) and, like any stdio server, ends when its input does. The MCP client
  // closes a server by ending its input, then SIGTERM after 2 s.
  const server = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); process.stdin.on('data', () => {}).on('end', () => process.exit(0))`;
  const config = join(dir, 'mcp.yaml');
  writeFileSync(config, `tools: []\nmcp_servers:\n  - name: silent\n    command: ${JSON.stringify([process.execPath, '-e', server])}\n    connect_timeout_ms: 15000\n`);
  const daemon = spawnDaemon(['--config', config]);
  const pid = await until(() => (existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '' ? Number(readFileSync(pidFile, 'utf8')) : undefined), 'the MCP server to start');
  try {
    await new Promise((r) => setTimeout(r, 200));
    daemon.sent();
    daemon.child.kill('SIGTERM');
    const { code, ms } = await daemon.exited;
    expect(code).toBe(0);
    expect(ms).toBeLessThan(1_000);
    await until(() => (alive(pid) ? undefined : true), 'the MCP server to be stopped', 2_000);
  } finally {
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
});
