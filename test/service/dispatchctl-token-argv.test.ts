// A token given as `--token T` is on dispatchctl's command line, which /proc/PID/cmdline, and so
// `ps`, shows to every local user for as long as the process runs: `events` tails for hours. Once
// started, dispatchctl writes its title without the token's value. The compiled CLI (`npm run
// build` first) against a real server with auth on port 0; Linux's /proc.
import { readFileSync } from 'node:fs';
import { startDispatchctl } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';
import { authYaml, bearer, type TestToken } from '../security/support/auth-app';
import { until } from '../helpers/until';

jest.setTimeout(30_000);

const OPS: TestToken = { token: 'tok-ops-5e5e5e5e5e', tenant: 'ops', scopes: ['dispatch', 'subscribe'] };
const TOOLS = 'tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n';

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(`${TOOLS}${authYaml([OPS])}`);
});
afterAll(() => d.close());

let calls = 0;
const call = () => d.dispatch.dispatch({ sessionId: 'argv', calls: [{ id: 'probe', name: 'echo', arguments: `{"n":${++calls}}` }] }, bearer(OPS.token));

test.each([
  ['--token T', ['--token', OPS.token]],
  ['--token=T', [`--token=${OPS.token}`]],
])('a running events given %s shows no token in /proc/PID/cmdline (ps)', async (_form, flag) => {
  const run = startDispatchctl(['--address', d.address, ...flag, '--session', 'argv', 'events']);
  try {
    await until(async () => {
      await call();
      return run.out().includes('call=probe') || undefined;
    }, 'the subscription live');
    const cmdline = readFileSync(`/proc/${run.child.pid}/cmdline`, 'utf8').replace(/\0+/g, ' ').trim();
    expect(cmdline).not.toContain(OPS.token);
    expect(cmdline).toMatch(/dispatchctl .*--session argv events$/);
  } finally {
    run.child.kill('SIGKILL');
  }
});
