// An SRE's finding: dispatchd's log is JSON lines, which a log pipeline parses one by one, but
// every reason it could not start (a bad flag, a bad config file, a port in use, a TLS file, Redis
// refusing the password) was a plain-text line, unparsed and unalerted. Each is now one JSON line
// in the log's shape, at error level, with a stable `code` and fields naming what failed, and the
// text it printed before in `message`. --help stays plain text on standard output.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDaemon } from '../helpers/daemon';
import { startRedis, type TestRedis } from '../helpers/redis-server';

const dir = mkdtempSync(join(tmpdir(), 'startup-errors-json-'));
let redis: TestRedis;
let holder: Server;
let heldPort: number;

beforeAll(async () => {
  redis = await startRedis({ own: true });
  // Once it answers: the helper's readiness check is an unauthenticated PING.
  redis.cli('CONFIG', 'SET', 'requirepass', 'right');
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  heldPort = (holder.address() as AddressInfo).port;
});
afterAll(async () => {
  if (holder) await new Promise((resolve) => holder.close(resolve));
  await redis?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The file `name` in the test's directory, holding `text`. */
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** Every stderr line parsed as JSON (a line that is not JSON fails the test), and the one at error level. */
function parsed(stderr: string): { lines: Record<string, unknown>[]; fatal: Record<string, unknown> } {
  const lines = stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`a stderr line is not JSON: ${line}`);
      }
    });
  const errors = lines.filter((line) => line.level === 'error');
  expect(errors).toHaveLength(1);
  // The reason is the last thing said: `kubectl logs --previous | tail -1` shows it.
  expect(lines.at(-1)).toBe(errors[0]);
  expect(Object.keys(errors[0]!).slice(0, 3)).toEqual(['time', 'level', 'message']);
  return { lines, fatal: errors[0]! };
}

/** Runs dispatchd expecting it not to start; its exit code and its one error line. */
async function refused(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; fatal: Record<string, unknown> }> {
  const run = await runDaemon(args, { DISPATCH_LISTEN: '', DISPATCH_CONFIG: '', DISPATCH_REDIS_URL: '', ...env });
  const { fatal } = parsed(run.stderr);
  expect(fatal.exitCode).toBe(run.code);
  return { code: run.code, fatal };
}

test('a flag dispatchd does not know, or one without its value: invalid_flag, exit 2, naming the flag (--help stays plain text on stdout)', async () => {
  const unknown = await refused(['--listen', '127.0.0.1:0', '--bogus']);
  expect(unknown).toEqual({ code: 2, fatal: expect.objectContaining({ level: 'error', message: "dispatchd: Unknown option '--bogus'", code: 'invalid_flag', setting: '--bogus' }) });
  const missing = await refused(['--listen']);
  expect(missing.fatal).toMatchObject({ code: 'invalid_flag', setting: '--listen' });
  expect(await runDaemon(['--help'])).toEqual({ code: 0, stderr: '' });
});

test('a bad value names the flag or the variable that gave it: invalid_setting, exit 2', async () => {
  const grace = await refused(['--listen', '127.0.0.1:0'], { DISPATCH_GRACE_MS: 'soon' });
  expect(grace).toEqual({
    code: 2,
    fatal: expect.objectContaining({
      message: 'dispatchd: DISPATCH_GRACE_MS must be a non-negative integer of milliseconds, got "soon"',
      code: 'invalid_setting',
      setting: 'DISPATCH_GRACE_MS',
      error: 'DISPATCH_GRACE_MS must be a non-negative integer of milliseconds, got "soon"',
    }),
  });
  const level = await refused(['--listen', '127.0.0.1:0'], { DISPATCH_LOG_LEVEL: 'loud' });
  expect(level.fatal).toMatchObject({ code: 'invalid_setting', setting: 'DISPATCH_LOG_LEVEL' });
  const listen = await refused(['--listen', 'nowhere']);
  expect(listen.fatal).toMatchObject({ code: 'invalid_setting', setting: '--listen', message: 'dispatchd: --listen must be HOST:PORT with a port from 0 to 65535, got "nowhere"' });
});

test('a bad Redis URL: invalid_redis_url, from the flag (exit 2) or from the config file (exit 1, its file and key)', async () => {
  const byFlag = await refused(['--listen', '127.0.0.1:0', '--redis', 'http://x']);
  expect(byFlag.code).toBe(2);
  expect(byFlag.fatal).toMatchObject({ code: 'invalid_redis_url', setting: '--redis', error: expect.stringMatching(/^bad Redis URL "http:\/\/x": unknown scheme/) });
  const config = file('redis-url.yaml', 'tools: []\nredis:\n  url: "http://x"\n');
  const byFile = await refused(['--listen', '127.0.0.1:0', '--config', config]);
  expect(byFile.code).toBe(1);
  expect(byFile.fatal).toMatchObject({ code: 'invalid_redis_url', file: config, path: 'redis.url', message: expect.stringMatching(/^dispatchd: cannot start: bad Redis URL .*\(from .*redis-url\.yaml: redis\.url\)$/) });
});

test('a config file that cannot be read, does not parse or holds a bad key: invalid_config, exit 1, its file and where', async () => {
  const missing = join(dir, 'none.yaml');
  expect(await refused(['--listen', '127.0.0.1:0', '--config', missing])).toEqual({
    code: 1,
    fatal: expect.objectContaining({ message: `dispatchd: bad config: ${missing}: cannot read the file (ENOENT)`, code: 'invalid_config', file: missing, error: 'cannot read the file (ENOENT)' }),
  });
  const syntax = file('syntax.yaml', 'tools: [\n');
  const bad = await refused(['--listen', '127.0.0.1:0', '--config', syntax]);
  expect(bad.fatal).toMatchObject({ code: 'invalid_config', file: syntax, line: 2, column: 1 });
  const key = file('key.yaml', 'tools:\n  - name: x\n    builtin: { name: echo }\n    max_atempts: 2\n');
  const unknown = await refused(['--listen', '127.0.0.1:0', '--config', key]);
  expect(unknown.fatal).toMatchObject({ code: 'invalid_config', file: key, path: 'tools[0].max_atempts', error: expect.stringMatching(/^unknown key "max_atempts"/) });
});

test('an address beyond loopback without authentication: insecure_listen, exit 2', async () => {
  expect(await refused(['--listen', '0.0.0.0:0'])).toEqual({ code: 2, fatal: expect.objectContaining({ code: 'insecure_listen', setting: '--listen', address: '0.0.0.0:0', message: expect.stringMatching(/^dispatchd: refusing to listen on 0\.0\.0\.0:0 without authentication;/) }) });
});

test('a port in use, the gRPC one or the metrics one: listen_failed, exit 1, the setting, address and errno', async () => {
  const address = `127.0.0.1:${heldPort}`;
  const grpc = await refused([], { DISPATCH_LISTEN: address });
  expect(grpc).toEqual({
    code: 1,
    fatal: expect.objectContaining({
      message: `dispatchd: cannot start: cannot listen on ${address} (from DISPATCH_LISTEN): the address is already in use; stop what holds it, or choose another with --listen HOST:PORT or DISPATCH_LISTEN`,
      code: 'listen_failed',
      setting: 'DISPATCH_LISTEN',
      address,
      errno: 'EADDRINUSE',
    }),
  });
  const metrics = await refused(['--listen', '127.0.0.1:0', '--metrics-listen', address]);
  expect(metrics.fatal).toMatchObject({ code: 'listen_failed', setting: '--metrics-listen', address, errno: 'EADDRINUSE' });
});

test('a TLS file missing or unusable: tls_files, exit 1', async () => {
  const missing = join(dir, 'none.pem');
  const unread = await refused(['--listen', '127.0.0.1:0', '--tls-cert', missing, '--tls-key', missing]);
  expect(unread).toEqual({ code: 1, fatal: expect.objectContaining({ message: `dispatchd: cannot start: cannot read --tls-cert ${missing} (ENOENT)`, code: 'tls_files', setting: '--tls-cert', file: missing }) });
  const garbage = file('garbage.pem', 'not a certificate\n');
  const unusable = await refused(['--listen', '127.0.0.1:0', '--tls-cert', garbage, '--tls-key', garbage]);
  expect(unusable.fatal).toMatchObject({ code: 'tls_files', error: `no PEM certificate in ${garbage}` });
});

test('Redis refusing the password: redis_refused, exit 1, after its warning (every line JSON)', async () => {
  const url = `redis://:wrong@127.0.0.1:${redis.port}`;
  const run = await refused(['--listen', '127.0.0.1:0', '--redis', url]);
  expect(run).toEqual({ code: 1, fatal: expect.objectContaining({ code: 'redis_refused', setting: '--redis', message: expect.stringMatching(/^dispatchd: cannot start: redis refused the password in the Redis URL/) }) });
});
