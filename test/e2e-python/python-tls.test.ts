// The Python examples against real dispatchd processes serving TLS and mutual TLS (certificates made
// with openssl at test time), their refusal to send a token in plaintext beyond loopback, and the
// settings they refuse; as dispatchctl does (test/service/dispatchctl-tls.test.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { isLocalTarget } from '../../src/cli/loopback';
import { createRegistryClient } from '../../src/client';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { until } from '../helpers/until';
import { authYaml, bearer, type TestToken } from '../security/support/auth-app';
import { createTestPki, type TestPki } from '../security/support/certificates';
import { describeWithPython, EXAMPLES, finished, PYTHON, runPython, type RunningPython } from './python';

const BACKEND: TestToken = { token: 'py-backend-7a7a7a', tenant: 'py', scopes: ['dispatch'] };
const WORKER: TestToken = { token: 'py-worker-3b3b3b', tenant: 'py', scopes: ['worker'] };
const WORD_COUNT = JSON.stringify([{ id: 'w', name: 'py_word_count', arguments: '{"text": "over tls"}' }]);
const COUNTED = 'w ok tool=py_word_count attempts=1: {"words": 2, "longest": "over"}';
const ECHO = JSON.stringify([{ id: 'e', name: 'echo', arguments: '{}' }]);

// In a network namespace of its own, where nothing is reachable: an example that did try to
// connect would fail UNAVAILABLE without a packet leaving the machine.
const isolated = spawnSync('unshare', ['-n', 'true']).status === 0;
const REMOTE = '192.0.2.10:50051';

describeWithPython('the Python examples over TLS, and their settings', () => {
  let pki: TestPki;
  let tls: Daemon;
  let mtls: Daemon;
  let plain: Daemon;
  const at = (d: Daemon) => `127.0.0.1:${d.port}`;
  const stubs = mkdtempSync(join(tmpdir(), 'py-tls-stubs-'));
  const base = { DISPATCH_PY_STUBS: join(stubs, 'stubs') };
  const workers: RunningPython[] = [];
  const backends: RunningPython[] = [];
  type BackendRun = Awaited<ReturnType<typeof backend>>;
  /**
   * The runs refused a connection, which fail only after the channel's retries (seconds each):
   * started together once the daemons serve, each checked by its own test.
   */
  let refused: { plaintextToTls: Promise<BackendRun>; defaultRoots: Promise<BackendRun>; noClientCertificate: Promise<BackendRun>; remote: Promise<BackendRun>[] };

  beforeAll(async () => {
    pki = createTestPki();
    const config = join(pki.dir, 'dispatch.yaml');
    writeFileSync(config, `${readFileSync(join(__dirname, '../../examples/tools.yaml'), 'utf8')}\n${authYaml([BACKEND, WORKER])}`);
    const server = ['--config', config, '--tls-cert', pki.serverCert, '--tls-key', pki.serverKey];
    [tls, mtls, plain] = await Promise.all([startDaemon(server), startDaemon([...server, '--tls-ca', pki.ca]), startDaemon(['--config', config])]);
    // What lets a token go to REMOTE (in a namespace of its own): the run then fails UNAVAILABLE.
    const allowed: NodeJS.ProcessEnv[] = [{ DISPATCH_ALLOW_PLAINTEXT_TOKEN: '1' }, { DISPATCH_TLS_CA: pki.ca }];
    refused = {
      plaintextToTls: backend(['--address', at(tls), '--calls', WORD_COUNT], { DISPATCH_TOKEN: BACKEND.token }),
      // grpcio's own bundle of roots lacks the test CA.
      defaultRoots: backend(['--address', at(tls), '--calls', ECHO], { DISPATCH_TOKEN: BACKEND.token, DISPATCH_TLS: '1' }),
      noClientCertificate: backend(['--address', at(mtls), '--calls', WORD_COUNT], { DISPATCH_TOKEN: BACKEND.token, DISPATCH_TLS_CA: pki.ca }),
      remote: isolated ? allowed.map((env) => backend(['--address', REMOTE], { DISPATCH_TOKEN: BACKEND.token, ...env }, ['unshare', '-n'])) : [],
    };
  }, 30_000);
  afterAll(() => {
    for (const w of [...workers, ...backends]) w.child.kill('SIGKILL');
    for (const d of [tls, mtls, plain]) d?.child.kill('SIGKILL');
    pki?.remove();
    rmSync(stubs, { recursive: true, force: true });
  });

  const backend = async (args: string[], env: NodeJS.ProcessEnv, prefix: string[] = []) => {
    const run = runPython('backend.py', args, { ...base, ...env }, prefix);
    backends.push(run);
    const { code, out } = await finished(run, 30_000);
    return { code, out, lines: out.trim().split('\n') };
  };

  /** Starts worker.py and waits until `daemon` lists its tool (asked over `credentials`). */
  async function hostWorker(daemon: Daemon, env: NodeJS.ProcessEnv, credentials: grpc.ChannelCredentials): Promise<RunningPython> {
    const worker = runPython('worker.py', ['--address', at(daemon), '--id', `py-${workers.length}`], { ...base, DISPATCH_TOKEN: WORKER.token, ...env });
    workers.push(worker);
    // By name: Node warns of TLS to an IP address (the server certificate names both).
    const registry = createRegistryClient(`localhost:${daemon.port}`, credentials);
    try {
      await until(async () => {
        if (worker.child.exitCode !== null) throw new Error(`the Python worker exited: ${worker.out()}`);
        const { tools } = await registry.listTools({}, bearer(BACKEND.token));
        return tools.some((t) => t.name === 'py_word_count') || undefined;
      }, 'the Python worker to register', 20_000);
    } finally {
      registry.close();
    }
    return worker;
  }

  const stop = async (worker: RunningPython) => {
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  };

  test('DISPATCH_TLS_CA: the worker hosts its tool and the backend dispatches to it, the server verified against that CA', async () => {
    const env = { DISPATCH_TLS_CA: pki.ca };
    const worker = await hostWorker(tls, env, grpc.credentials.createSsl(readFileSync(pki.ca)));
    const served = await backend(['--address', at(tls), '--calls', WORD_COUNT], { ...env, DISPATCH_TOKEN: BACKEND.token });
    expect(served).toMatchObject({ code: 0, lines: [COUNTED] });
    // Said once the stream is up: a second after hello, or at its first assignment (this call).
    expect(worker.out()).toContain(`worker py-0 hosting py_word_count on ${at(tls)} (TLS)`);
    expect(worker.out()).toContain('completed py_word_count call=w attempt=1 error=False');
    // In plaintext a TLS server is not reached.
    const plaintext = await refused.plaintextToTls;
    expect(plaintext.code).toBe(1);
    expect(plaintext.out).toMatch(/^dispatch failed: UNAVAILABLE: /m);
    await stop(worker);
  }, 60_000);

  test("DISPATCH_TLS=1: the server is verified against gRPC's default roots", async () => {
    // The default roots are read from this file when it is set; grpcio's own bundle lacks the test CA.
    const trusted = await backend(['--address', at(tls), '--calls', ECHO], { DISPATCH_TOKEN: BACKEND.token, DISPATCH_TLS: '1', GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: pki.ca });
    expect(trusted).toMatchObject({ code: 0, lines: ['e ok tool=echo attempts=1: {}'] });
    const bundled = await refused.defaultRoots;
    expect(bundled.code).toBe(1);
    expect(bundled.out).toMatch(/^dispatch failed: UNAVAILABLE: .*certificate verify failed/m);
  }, 60_000);

  test('mutual TLS: DISPATCH_TLS_CERT and DISPATCH_TLS_KEY present the client certificate', async () => {
    const client = pki.client('py', '/CN=py');
    const env = { DISPATCH_TLS_CA: pki.ca, DISPATCH_TLS_CERT: client.cert, DISPATCH_TLS_KEY: client.key };
    const worker = await hostWorker(mtls, env, grpc.credentials.createSsl(readFileSync(pki.ca), readFileSync(client.key), readFileSync(client.cert)));
    const served = await backend(['--address', at(mtls), '--calls', WORD_COUNT], { ...env, DISPATCH_TOKEN: BACKEND.token });
    expect(served).toMatchObject({ code: 0, lines: [COUNTED] });
    const without = await refused.noClientCertificate;
    expect(without.code).toBe(1);
    expect(without.out).toMatch(/^dispatch failed: UNAVAILABLE: /m);
    await stop(worker);
  }, 60_000);

  test('empty variables count as unset: a token in plaintext to localhost, the default pings', async () => {
    const empty = { DISPATCH_ADDRESS: '', DISPATCH_TLS: '', DISPATCH_TLS_CA: '', DISPATCH_TLS_CERT: '', DISPATCH_TLS_KEY: '', DISPATCH_ALLOW_PLAINTEXT_TOKEN: '', DISPATCH_KEEPALIVE_MS: '', DISPATCH_KEEPALIVE_TIMEOUT_MS: '' };
    const calls = JSON.stringify([{ id: 'e', name: 'echo', arguments: '{"via": "localhost"}' }]);
    // A newline after the token (`$(cat file)` keeps none, a Secret may) is not part of it.
    const run = await backend(['--address', `localhost:${plain.port}`, '--calls', calls], { ...empty, DISPATCH_TOKEN: `${BACKEND.token}\n` });
    expect(run).toMatchObject({ code: 0, lines: ['e ok tool=echo attempts=1: {"via":"localhost"}'] });
  }, 60_000);

  test('a setting that cannot be used exits 2 with a message naming it, before connecting', async () => {
    const client = pki.client('py-mismatch', '/CN=py');
    const missing = join(pki.dir, 'nope.crt');
    const cases: [NodeJS.ProcessEnv, string][] = [
      [{ DISPATCH_KEEPALIVE_TIMEOUT_MS: 'ten' }, "DISPATCH_KEEPALIVE_TIMEOUT_MS must be a whole number of milliseconds from 1 to 2147483647, got 'ten'"],
      [{ DISPATCH_KEEPALIVE_TIMEOUT_MS: '0' }, "DISPATCH_KEEPALIVE_TIMEOUT_MS must be a whole number of milliseconds from 1 to 2147483647, got '0'"],
      [{ DISPATCH_KEEPALIVE_MS: '2147483648' }, "DISPATCH_KEEPALIVE_MS must be a whole number of milliseconds from 0 to 2147483647, got '2147483648'"],
      [{ DISPATCH_KEEPALIVE_MS: '-1' }, "DISPATCH_KEEPALIVE_MS must be a whole number of milliseconds from 0 to 2147483647, got '-1'"],
      [{ DISPATCH_TLS: 'yes' }, "DISPATCH_TLS must be 1 or 0, got 'yes'"],
      [{ DISPATCH_ALLOW_PLAINTEXT_TOKEN: 'true' }, "DISPATCH_ALLOW_PLAINTEXT_TOKEN must be 1 or 0, got 'true'"],
      [{ DISPATCH_TLS_CA: missing }, `cannot read DISPATCH_TLS_CA ${missing} (ENOENT)`],
      [{ DISPATCH_TLS_CA: pki.serverKey }, `no PEM certificate in ${pki.serverKey}`],
      [{ DISPATCH_TLS_CERT: client.cert }, 'DISPATCH_TLS_CERT and DISPATCH_TLS_KEY must be given together'],
      [{ DISPATCH_TLS_CERT: client.cert, DISPATCH_TLS_KEY: pki.serverKey }, `the private key in ${pki.serverKey} does not match the certificate in ${client.cert}`],
      [{ DISPATCH_TOKEN: 'py-backend 7a7a7a' }, 'the token in DISPATCH_TOKEN holds whitespace at position 11; a bearer token is visible ASCII (the token is not shown)'],
    ];
    // All at once: each exits on its own setting before connecting.
    const [worker, ...runs] = await Promise.all([
      finished(runPython('worker.py', ['--address', at(plain)], { ...base, DISPATCH_TOKEN: WORKER.token, DISPATCH_KEEPALIVE_TIMEOUT_MS: ' ' }), 15_000),
      ...cases.map(([env]) => backend(['--address', at(plain)], { DISPATCH_TOKEN: BACKEND.token, ...env })),
    ]);
    for (const [i, [, message]] of cases.entries()) {
      expect(runs[i]).toMatchObject({ code: 2, out: `backend.py: ${message}\n` });
    }
    expect(worker).toEqual({ code: 2, out: "worker.py: DISPATCH_KEEPALIVE_TIMEOUT_MS must be a whole number of milliseconds from 1 to 2147483647, got ' '\n" });
  }, 120_000);

  const refusal = (script: string) =>
    `${script}: refusing to send the token in plaintext to ${REMOTE}, which is not a loopback address (127.0.0.0/8, ::1, localhost): ` +
    "set DISPATCH_TLS=1 (gRPC's default roots) or DISPATCH_TLS_CA=FILE, or DISPATCH_ALLOW_PLAINTEXT_TOKEN=1 when the connection is protected otherwise (a service mesh, a tunnel)\n";

  (isolated ? test : test.skip)('a token in plaintext is refused beyond loopback without connecting, and sent with DISPATCH_ALLOW_PLAINTEXT_TOKEN=1 or over TLS', async () => {
    // All at once (the runs allowed to connect started with the daemons).
    const refusals = ['backend.py', 'worker.py'].map(async (script) => {
      const byFlag = finished(runPython(script, ['--address', REMOTE], { ...base, DISPATCH_TOKEN: BACKEND.token }, ['unshare', '-n']), 15_000);
      const byEnv = finished(runPython(script, [], { ...base, DISPATCH_ADDRESS: REMOTE, DISPATCH_TOKEN: BACKEND.token }, ['unshare', '-n']), 15_000);
      return { script, byFlag: await byFlag, byEnv: await byEnv };
    });
    for (const { script, byFlag, byEnv } of await Promise.all(refusals)) {
      expect(byFlag).toEqual({ code: 2, out: refusal(script) });
      expect(byEnv).toEqual({ code: 2, out: refusal(script) });
    }
    expect(refused.remote).toHaveLength(2);
    for (const run of await Promise.all(refused.remote)) {
      expect(run.code).toBe(1);
      expect(run.out).toMatch(/^dispatch failed: UNAVAILABLE: /m);
    }
  }, 60_000);

  test('the loopback test agrees with dispatchctl on every target built from these parts', () => {
    const hosts = ['127.0.0.1', '127.255.0.9', '::1', '[::1]', '[0:0:0:0:0:0:0:1]', '[::ffff:127.0.0.1]', 'localhost', 'LocalHost', '127.attacker.example', 'localhost.attacker.example', '127.0.0.1.nip.io', '127.1', '0.0.0.0', '[::]', '10.0.0.1', '192.0.2.1', 'dispatch.internal'];
    const schemes = ['', 'dns:///', 'dns://10.0.0.53/', 'ipv4:', 'ipv6:'];
    const targets = [
      ...schemes.flatMap((scheme) => hosts.flatMap((host) => ['', ':0', ':50051'].map((port) => `${scheme}${host}${port}`))),
      'ipv4:127.0.0.1:1,127.0.0.2:2',
      'ipv4:127.0.0.1:1,10.0.0.1:2',
      'unix:/run/dispatch.sock',
      'unix-abstract:dispatch',
    ];
    const code = 'import json, sys, dispatch_connection as c; print(json.dumps([c.is_local_target(t) for t in json.load(sys.stdin)]))';
    const run = spawnSync(PYTHON, ['-c', code], { cwd: EXAMPLES, input: JSON.stringify(targets), encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const python = JSON.parse(run.stdout) as boolean[];
    const dispatchctl = targets.map((t) => isLocalTarget(t));
    expect(targets.map((t, i) => [t, python[i]])).toEqual(targets.map((t, i) => [t, dispatchctl[i]]));
    // Both answers occur, for the examples' own cases among them.
    expect(dispatchctl.filter(Boolean).length).toBeGreaterThan(20);
    expect(dispatchctl.filter((local) => !local).length).toBeGreaterThan(20);
    expect(['localhost:50051', '[::1]:50051', 'dns:///127.0.0.1:50051'].map((t) => python[targets.indexOf(t)])).toEqual([true, true, true]);
    expect(['192.0.2.1:50051', '127.attacker.example:50051', 'ipv4:127.0.0.1:1,10.0.0.1:2'].map((t) => python[targets.indexOf(t)])).toEqual([false, false, false]);
  });
});
