// dispatchctl against real dispatchd processes serving TLS and mutual TLS (certificates made with
// openssl at test time), and its refusal to send a token in plaintext beyond loopback.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { runDispatchctl, startDispatchctl } from '../helpers/dispatchctl';
import { until } from '../helpers/until';
import { authYaml, type TestToken } from '../security/support/auth-app';
import { createTestPki, type TestPki } from '../security/support/certificates';

const ADMIN: TestToken = { token: 'ctl-admin-5c5c5c', tenant: 'ops', scopes: ['dispatch', 'subscribe', 'admin'] };
const TOOLS = 'tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n';

let pki: TestPki;
let tls: Daemon;
let mtls: Daemon;
let plain: Daemon;
const at = (d: Daemon) => `127.0.0.1:${d.port}`;
const listed = /^echo\s+read-only\s+builtin/m;

beforeAll(async () => {
  pki = createTestPki();
  const config = join(pki.dir, 'dispatch.yaml');
  writeFileSync(config, `${TOOLS}${authYaml([ADMIN])}`);
  const server = ['--config', config, '--tls-cert', pki.serverCert, '--tls-key', pki.serverKey];
  [tls, mtls, plain] = await Promise.all([startDaemon(server), startDaemon([...server, '--tls-ca', pki.ca]), startDaemon(['--config', config])]);
}, 30_000);
afterAll(async () => {
  for (const d of [tls, mtls, plain]) d?.child.kill('SIGKILL');
  pki.remove();
});

describe('TLS', () => {
  test('--tls-ca or DISPATCH_TLS_CA: the server is verified against that CA and served', async () => {
    const [byFlag, byEnv] = await Promise.all([
      runDispatchctl(['--address', at(tls), '--token', ADMIN.token, '--tls-ca', pki.ca, 'tools', 'list']),
      runDispatchctl(['tools', 'list'], { DISPATCH_ADDRESS: at(tls), DISPATCH_TOKEN: ADMIN.token, DISPATCH_TLS_CA: pki.ca }),
    ]);
    expect(byFlag).toMatchObject({ code: 0, err: '' });
    expect(byFlag.out).toMatch(listed);
    expect(byEnv).toMatchObject({ code: 0, err: '' });
    expect(byEnv.out).toMatch(listed);
  });

  test('without TLS, or with --tls alone (the system CAs, which do not hold the test CA), there is no connection', async () => {
    const [plaintext, events, systemCas] = await Promise.all([
      runDispatchctl(['--address', at(tls), '--token', ADMIN.token, '--timeout', '5', 'tools', 'list']),
      runDispatchctl(['--address', at(tls), '--token', ADMIN.token, '--timeout', '5', 'events']),
      runDispatchctl(['--address', at(tls), '--token', ADMIN.token, '--timeout', '5', '--tls', 'tools', 'list']),
    ]);
    expect(plaintext.code).toBe(1);
    // grpc-js says only "Failed to connect": the hint names the likely cause.
    expect(plaintext.err).toMatch(/^dispatchctl: UNAVAILABLE: .*Failed to connect.* \(is the server using TLS\? pass --tls-ca FILE, or --tls when its certificate is from a public CA\)\n$/);
    expect(events.code).toBe(1);
    expect(events.err).toMatch(/ \(is the server using TLS\? pass --tls-ca FILE/);
    expect(systemCas.code).toBe(1);
    expect(systemCas.err).toMatch(/^dispatchctl: UNAVAILABLE: /);
    expect(systemCas.err).not.toContain('is the server using TLS');
  });

  test('events streams over TLS too', async () => {
    const events = startDispatchctl(['--address', at(tls), '--token', ADMIN.token, '--tls-ca', pki.ca, 'events', '--session', 'tls-ev']);
    try {
      // Live once a probe dispatched in the session shows up.
      await until(async () => {
        await runDispatchctl(['--address', at(tls), '--token', ADMIN.token, '--tls-ca', pki.ca, '--session', 'tls-ev', 'call', 'echo', '{}']);
        return events.out().includes('TOOL_POST session=tls-ev') || undefined;
      }, 'an event over TLS', 15_000);
    } finally {
      events.child.kill('SIGINT');
    }
    expect(await events.done).toMatchObject({ code: 0, err: '' });
  }, 30_000);

  test('unreadable or unusable TLS files are named', async () => {
    const [missing, keyAsCa, lone] = await Promise.all([
      runDispatchctl(['--tls-ca', join(pki.dir, 'nope.crt'), 'tools', 'list']),
      runDispatchctl(['--tls-ca', pki.serverKey, 'tools', 'list']),
      runDispatchctl(['--tls-cert', pki.serverCert, 'tools', 'list']),
    ]);
    expect(missing).toMatchObject({ code: 1, err: `dispatchctl: cannot read --tls-ca ${join(pki.dir, 'nope.crt')} (ENOENT)\n` });
    expect(keyAsCa).toMatchObject({ code: 1, err: `dispatchctl: no PEM certificate in ${pki.serverKey}\n` });
    expect(lone.code).toBe(2);
    expect(lone.err).toMatch(/^dispatchctl: --tls-cert and --tls-key must be given together: --tls-cert is set, --tls-key \(DISPATCH_TLS_KEY\) is not\n/);
  });
});

describe('mutual TLS', () => {
  test('--tls-cert/--tls-key or DISPATCH_TLS_CERT/_KEY present the client certificate', async () => {
    const client = pki.client('ctl', '/CN=ops');
    const [byFlag, byEnv, without] = await Promise.all([
      runDispatchctl(['--address', at(mtls), '--token', ADMIN.token, '--tls-ca', pki.ca, '--tls-cert', client.cert, '--tls-key', client.key, 'tools', 'list']),
      runDispatchctl(['tools', 'list'], { DISPATCH_ADDRESS: at(mtls), DISPATCH_TOKEN: ADMIN.token, DISPATCH_TLS_CA: pki.ca, DISPATCH_TLS_CERT: client.cert, DISPATCH_TLS_KEY: client.key }),
      runDispatchctl(['--address', at(mtls), '--token', ADMIN.token, '--tls-ca', pki.ca, '--timeout', '5', 'tools', 'list']),
    ]);
    expect(byFlag).toMatchObject({ code: 0, err: '' });
    expect(byFlag.out).toMatch(listed);
    expect(byEnv).toMatchObject({ code: 0, err: '' });
    expect(without.code).toBe(1);
    expect(without.err).toMatch(/^dispatchctl: UNAVAILABLE: /);
  });
});

describe('a token in plaintext', () => {
  test('goes to a loopback address', async () => {
    const run = await runDispatchctl(['--address', at(plain), '--token', ADMIN.token, 'tools', 'list']);
    expect(run).toMatchObject({ code: 0, err: '' });
    expect(run.out).toMatch(listed);
  });

  // In a network namespace of its own, where nothing is reachable: a dispatchctl that did try to
  // connect would fail UNAVAILABLE (ENETUNREACH) without a packet leaving the machine.
  const isolated = spawnSync('unshare', ['-n', 'true']).status === 0;
  const inNamespace = isolated ? test : test.skip;
  const REMOTE = '192.0.2.10:50051';
  const REFUSAL = `dispatchctl: refusing to send the token in plaintext to ${REMOTE}, which is not a loopback address (127.0.0.0/8, ::1, localhost): use --tls (the system CAs) or --tls-ca FILE, or --allow-plaintext-token when the connection is protected otherwise (a service mesh, a tunnel)\n`;

  inNamespace('is refused beyond loopback, for calls and for events, without connecting', async () => {
    const runs = [['tools', 'list'], ['events']].flatMap((args) => [
      runDispatchctl(['--address', REMOTE, '--token', ADMIN.token, ...args], {}, ['unshare', '-n']),
      runDispatchctl(args, { DISPATCH_ADDRESS: REMOTE, DISPATCH_TOKEN: ADMIN.token }, ['unshare', '-n']),
    ]);
    for (const run of await Promise.all(runs)) expect(run).toEqual({ code: 2, out: '', err: REFUSAL });
  });

  inNamespace('is sent beyond loopback with --allow-plaintext-token, and over TLS', async () => {
    const runs = [['--allow-plaintext-token'], ['--tls-ca', pki.ca]].map((extra) => runDispatchctl(['--address', REMOTE, '--token', ADMIN.token, '--timeout', '5', ...extra, 'tools', 'list'], {}, ['unshare', '-n']));
    for (const run of await Promise.all(runs)) {
      expect(run.code).toBe(1);
      expect(run.err).toMatch(/^dispatchctl: UNAVAILABLE: .*ENETUNREACH/);
    }
  });
});
