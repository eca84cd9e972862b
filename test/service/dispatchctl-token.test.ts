// How dispatchctl reads its bearer token: trimmed, and refused without being shown when a gRPC
// header cannot carry it, for every command (events too), against a real dispatchd process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { runDispatchctl } from '../helpers/dispatchctl';
import { authYaml, type TestToken } from '../security/support/auth-app';

const ADMIN: TestToken = { token: 'tok-admin-3a3a3a', tenant: 'ops', scopes: ['dispatch', 'subscribe', 'admin'] };
const dir = mkdtempSync(join(tmpdir(), 'ctl-token-'));
let daemon: Daemon;
let address: string;

beforeAll(async () => {
  const config = join(dir, 'dispatch.yaml');
  writeFileSync(config, `tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n${authYaml([ADMIN])}`);
  daemon = await startDaemon(['--config', config]);
  address = `127.0.0.1:${daemon.port}`;
});
afterAll(() => {
  daemon?.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

test('a token with surrounding whitespace (a newline from a file or a Secret) is sent trimmed', async () => {
  const byEnv = await runDispatchctl(['--address', address, 'call', 'echo', '{"n":1}'], { DISPATCH_TOKEN: `${ADMIN.token}\n` });
  expect(byEnv).toMatchObject({ code: 0, err: '' });
  expect(byEnv.out).toContain('{"n":1}');
  const byFlag = await runDispatchctl(['--address', address, '--token', ` ${ADMIN.token}\r\n`, 'tools', 'list']);
  expect(byFlag).toMatchObject({ code: 0, err: '' });
});

test.each([
  ['a control character', 'sec\x01ret-one', 4],
  ['whitespace', 'sec ret-two', 4],
  ['a non-ASCII character', 'sécret-three', 2],
])('a token holding %s is refused, for calls and events alike, naming where but never showing it', async (what, token, position) => {
  for (const command of [['tools', 'list'], ['events', '--session', 's']]) {
    const byEnv = await runDispatchctl(['--address', address, ...command], { DISPATCH_TOKEN: token });
    expect(byEnv).toEqual({ code: 2, out: '', err: `dispatchctl: the token in DISPATCH_TOKEN holds ${what} at position ${position}; a bearer token is visible ASCII (the token is not shown)\n` });
    const byFlag = await runDispatchctl(['--address', address, '--token', token, ...command]);
    expect(byFlag).toEqual({ code: 2, out: '', err: `dispatchctl: the token in --token holds ${what} at position ${position}; a bearer token is visible ASCII (the token is not shown)\n` });
  }
});

test('a failure of events is reported as other commands report theirs, without a stack', async () => {
  const run = await runDispatchctl(['--address', address, 'events', '--kind', 'nonsense']);
  expect(run).toMatchObject({ code: 2, out: '' });
  expect(run.err).toMatch(/^dispatchctl: unknown event kind "nonsense"/);
  const refused = await runDispatchctl(['--address', address, 'events'], { DISPATCH_TOKEN: 'not-a-known-token' });
  expect(refused).toEqual({ code: 1, out: '', err: expect.stringMatching(/^dispatchctl: UNAUTHENTICATED: [^\n]*\n$/) });
});
