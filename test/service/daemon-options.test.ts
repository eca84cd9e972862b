// dispatchd's settings as a real process reads them: empty variables, a CA without a certificate,
// ports out of range, and hosts that only look like loopback. Where a test checks a setting given
// by flag and by variable, the two processes run at once (each start is ~1 s of a core, mostly
// loading the app).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDaemon, startDaemon, type Daemon } from '../helpers/daemon';
import { failedStart, startupLine } from '../helpers/startup-line';
import { createTestPki, type TestPki } from '../security/support/certificates';

let pki: TestPki;
const dir = mkdtempSync(join(tmpdir(), 'dispatchd-options-'));
beforeAll(() => {
  pki = createTestPki();
});
afterAll(() => {
  pki.remove();
  rmSync(dir, { recursive: true, force: true });
});

// Every variable that counts as unset when empty, read by one daemon (each test only reads what it
// logged; the last stops it): a variable read as set fails the start, or shows in what is checked.
describe('empty variables count as unset', () => {
  let daemon: Daemon;
  beforeAll(async () => {
    daemon = await startDaemon([], {
      DISPATCH_GRACE_MS: '',
      DISPATCH_REDIS_URL: '',
      DISPATCH_CONFIG: '',
      DISPATCH_METRICS_LISTEN: '',
      DISPATCH_TLS_CERT: '',
      DISPATCH_TLS_KEY: '',
      DISPATCH_TLS_REFRESH_MS: '',
      DISPATCH_AUTH_TOKENS_FILE: '',
    });
  });
  afterAll(() => {
    daemon?.child.kill('SIGKILL');
  });

  test('other empty variables count as unset too', () => {
    expect(daemon.stderr()).toMatch(/"message":"dispatchd serving".*"config":"[^"]*examples\/tools\.yaml"/);
  });

  test('an empty DISPATCH_AUTH_TOKENS_FILE counts as unset (it was read as the config directory: EISDIR)', () => {
    expect(daemon.stderr()).toMatch(/"message":"dispatchd serving"/);
  });

  test('empty DISPATCH_GRACE_MS and DISPATCH_REDIS_URL count as unset: the default grace, the in-memory store, logged as such', async () => {
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    const logged = (message: string) => JSON.parse(daemon.stderr().split('\n').find((l) => l.includes(`"message":"${message}"`))!) as Record<string, unknown>;
    expect({ redis: logged('dispatchd serving').redis, graceMs: logged('draining').graceMs }).toEqual({ redis: false, graceMs: 10_000 });
  });
});

test.each(['grace', 'redis'])('an empty --%s is refused', async (flag) => {
  const run = await runDaemon(['--listen', '127.0.0.1:0', `--${flag}`, '']);
  expect(failedStart(run, { only: true })).toEqual({ exit: 2, level: 'error', code: 'invalid_setting', message: `dispatchd: --${flag} must not be empty` });
});

test('a client CA without a certificate and key is refused, by flag or environment, instead of serving plaintext', async () => {
  const message = (source: string) => `dispatchd: ${source} needs --tls-cert and --tls-key (or DISPATCH_TLS_CERT and DISPATCH_TLS_KEY): without them dispatchd would serve plaintext and check no client certificate`;
  const [byFlag, byEnv] = await Promise.all([runDaemon(['--listen', '127.0.0.1:0', '--tls-ca', pki.ca]), runDaemon(['--listen', '127.0.0.1:0'], { DISPATCH_TLS_CA: pki.ca })]);
  expect(failedStart(byFlag, { only: true })).toEqual({ exit: 2, level: 'error', code: 'invalid_setting', message: message('--tls-ca') });
  expect(failedStart(byEnv, { only: true })).toEqual({ exit: 2, level: 'error', code: 'invalid_setting', message: message('DISPATCH_TLS_CA') });
}, 40_000);

test.each(['127.0.0.1:99999', '[::1]:65536'])('--listen %s is a usage error', async (listen) => {
  const run = await runDaemon(['--listen', listen]);
  expect(failedStart(run, { only: true })).toEqual({ exit: 2, level: 'error', code: 'invalid_setting', message: `dispatchd: --listen must be HOST:PORT with a port from 0 to 65535, got ${JSON.stringify(listen)}` });
});

test('a host name that starts with 127. is not loopback: without authentication it is refused before any lookup', async () => {
  const run = await runDaemon(['--listen', '127.attacker.invalid:0']);
  expect(failedStart(run)).toEqual({ exit: 2, level: 'error', code: 'insecure_listen', message: expect.stringContaining('refusing to listen on 127.attacker.invalid:0 without authentication') });
});

test('a grace past the timer limit is a usage error (Node would run it after 1 ms)', async () => {
  const run = await runDaemon(['--listen', '127.0.0.1:0', '--grace', '2147483648']);
  expect(failedStart(run, { only: true })).toEqual({ exit: 2, level: 'error', code: 'invalid_setting', message: 'dispatchd: --grace must be at most 2147483647 ms, got "2147483648"' });
});

test('a mistake found while the app is built names the config file once; one about a flag names no file', async () => {
  const file = join(dir, 'bad-policy.yaml');
  require('node:fs').writeFileSync(file, 'tools: []\npolicies:\n  - decide: { when: [{ field: /x, op: "~", value: 1 }], then: block }\n');
  const [bad, missing] = await Promise.all([runDaemon(['--listen', '127.0.0.1:0', '--config', file]), runDaemon(['--listen', '127.0.0.1:0', '--tls-cert', join(dir, 'none.crt'), '--tls-key', join(dir, 'none.key')])]);
  expect(failedStart(bad)).toEqual({ exit: 1, level: 'error', code: 'invalid_config', message: expect.stringMatching(new RegExp(`^dispatchd: bad config: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: policies\\[0\\]`)) });
  expect(failedStart(missing)).toEqual({ exit: 1, level: 'error', code: 'tls_files', message: expect.stringMatching(/^dispatchd: cannot start: cannot read --tls-cert/) });
});

test('--help prints the usage on standard output and exits 0; a bad flag prints the error on standard error and exits 2', () => {
  const bin = join(__dirname, '..', '..', 'bin', 'dispatchd.js');
  const help = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8', timeout: 15_000 });
  expect(help.status).toBe(0);
  expect(help.stdout).toMatch(/^usage: dispatchd \[--listen HOST:PORT\]/);
  expect(help.stderr).toBe('');
  const bad = spawnSync(process.execPath, [bin, '--nope'], { encoding: 'utf8', timeout: 15_000 });
  expect(bad.status).toBe(2);
  expect(bad.stdout).toBe('');
  expect(startupLine(bad.stderr)).toMatchObject({ level: 'error', code: 'invalid_flag', exitCode: 2, message: expect.stringMatching(/^dispatchd: .*--nope/) });
});

test('a busy port is one line naming the address and what to change, exit 1 as other start-up errors (not a stack trace)', async () => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  try {
    const listen = `127.0.0.1:${(holder.address() as AddressInfo).port}`;
    const [byFlag, byEnv] = await Promise.all([runDaemon(['--listen', listen]), runDaemon([], { DISPATCH_LISTEN: listen })]);
    expect(failedStart(byFlag, { only: true })).toEqual({
      exit: 1,
      level: 'error',
      code: 'listen_failed',
      message: `dispatchd: cannot start: cannot listen on ${listen} (from --listen): the address is already in use; stop what holds it, or choose another with --listen HOST:PORT or DISPATCH_LISTEN`,
    });
    expect(startupLine(byEnv.stderr)).toMatchObject({ code: 'listen_failed', message: expect.stringContaining(`cannot listen on ${listen} (from DISPATCH_LISTEN): the address is already in use`) });
  } finally {
    holder.close();
  }
}, 40_000);

test('the metrics port busy is the same one line, naming --metrics-listen or DISPATCH_METRICS_LISTEN (it was a bare EADDRINUSE)', async () => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  try {
    const listen = `127.0.0.1:${(holder.address() as AddressInfo).port}`;
    const change = 'stop what holds it, or choose another with --metrics-listen HOST:PORT or DISPATCH_METRICS_LISTEN';
    const [byFlag, byEnv] = await Promise.all([runDaemon(['--listen', '127.0.0.1:0', '--metrics-listen', listen]), runDaemon(['--listen', '127.0.0.1:0'], { DISPATCH_METRICS_LISTEN: listen })]);
    expect(failedStart(byFlag, { only: true })).toEqual({
      exit: 1,
      level: 'error',
      code: 'listen_failed',
      message: `dispatchd: cannot start: cannot listen on ${listen} (from --metrics-listen): the address is already in use; ${change}`,
    });
    expect(failedStart(byEnv, { only: true })).toEqual({
      exit: 1,
      level: 'error',
      code: 'listen_failed',
      message: `dispatchd: cannot start: cannot listen on ${listen} (from DISPATCH_METRICS_LISTEN): the address is already in use; ${change}`,
    });
  } finally {
    holder.close();
  }
}, 40_000);

test('listening beyond loopback without authentication is a usage error, exit 2, naming the flag or variable that gave the address', async () => {
  const refusal = (from: string) => `dispatchd: refusing to listen on 0.0.0.0:0 without authentication; configure auth tokens or pass --insecure (DISPATCH_INSECURE=true), or give a loopback address with ${from}`;
  const [byFlag, byEnv] = await Promise.all([runDaemon(['--listen', '0.0.0.0:0']), runDaemon([], { DISPATCH_LISTEN: '0.0.0.0:0' })]);
  expect(failedStart(byFlag, { only: true })).toEqual({ exit: 2, level: 'error', code: 'insecure_listen', message: refusal('--listen') });
  expect(failedStart(byEnv, { only: true })).toEqual({ exit: 2, level: 'error', code: 'insecure_listen', message: refusal('DISPATCH_LISTEN') });
}, 40_000);

test('a bad Redis URL is a usage error, exit 2, naming --redis or DISPATCH_REDIS_URL', async () => {
  const forms = '(expected redis://[:password@]host:port/db, redis-sentinel://[:password@]host:26379,host:26379/MASTER or redis-cluster://[:password@]host:6379,host:6379; rediss://, rediss-sentinel:// and rediss-cluster:// over TLS)';
  const [byFlag, byEnv] = await Promise.all([runDaemon(['--listen', '127.0.0.1:0', '--redis', 'foo://x:1']), runDaemon(['--listen', '127.0.0.1:0'], { DISPATCH_REDIS_URL: 'redis://:hunter2@h:1/x' })]);
  expect(failedStart(byFlag, { only: true })).toEqual({ exit: 2, level: 'error', code: 'invalid_redis_url', message: `dispatchd: --redis: bad Redis URL "foo://x:1": unknown scheme "foo:" ${forms}` });
  expect(failedStart(byEnv, { only: true })).toEqual({
    exit: 2,
    level: 'error',
    code: 'invalid_redis_url',
    message: `dispatchd: DISPATCH_REDIS_URL: bad Redis URL "redis://***@h:1/x": database "x" is not a number ${forms}`,
  });
}, 40_000);

test('a file that cannot be read names the variable that gave it, not the flag', async () => {
  const env = { DISPATCH_TLS_CERT: pki.serverCert, DISPATCH_TLS_KEY: pki.serverKey, DISPATCH_TLS_CA: join(dir, 'none-ca.pem') };
  const run = await runDaemon(['--listen', '127.0.0.1:0'], env);
  expect(failedStart(run, { only: true })).toEqual({ exit: 1, level: 'error', code: 'tls_files', message: `dispatchd: cannot start: cannot read DISPATCH_TLS_CA ${join(dir, 'none-ca.pem')} (ENOENT)` });
}, 40_000);

test.each([
  [['--metrics-listen', '127.0.0.1:99999'], {}, '--metrics-listen must be HOST:PORT with a port from 0 to 65535, got "127.0.0.1:99999"'],
  [[], { DISPATCH_STATS_FLUSH_MS: 'abc' }, 'DISPATCH_STATS_FLUSH_MS must be an integer from 10 to 3600000, got "abc"'],
  [[], { DISPATCH_INSECURE: 'maybe' }, 'DISPATCH_INSECURE must be one of 1, true, yes, on (on) or 0, false, no, off (off), in any case, got "maybe"'],
])('%j %j is a usage error at start, exit 2, with or without Redis', async (argv, env, message) => {
  const run = await runDaemon(['--listen', '127.0.0.1:0', ...argv], env);
  expect(failedStart(run, { only: true })).toEqual({ exit: 2, level: 'error', code: 'invalid_setting', message: `dispatchd: ${message}` });
});
