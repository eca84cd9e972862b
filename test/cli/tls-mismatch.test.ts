// `--tls` against a plaintext server showed OpenSSL's `wrong version number`, which names neither
// TLS nor the flag, and grpc-js' empty "Resolution note:" after it. The opposite mistake (no TLS at
// a TLS server) already had its hint (dispatchctl-connection.ts, connectionHint); this one now has
// the matching hint, and the empty note is cut, for `tools list` and `events` alike. The compiled
// CLI (`npm run build` first) against the real plaintext server on port 0.
import { runDispatchctl } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';

jest.setTimeout(30_000);

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
});
afterAll(() => d.close());

const HINT = ' (the server does not speak TLS on this port; drop --tls and any --tls-ca, --tls-cert, --tls-key or DISPATCH_TLS_* setting)';

test.each([
  [['tools', 'list']],
  [['call', 'echo', '{}']],
  [['events']],
])('--tls %j at a plaintext server: exit 1, one line ending with the hint, no empty resolution note', async (argv) => {
  const run = await runDispatchctl(['--address', d.address, '--tls', '--timeout', '10', ...argv]);
  expect({ code: run.code, out: run.out }).toEqual({ code: 1, out: '' });
  expect(run.err).toMatch(/^dispatchctl: UNAVAILABLE: /);
  expect(run.err.endsWith(`${HINT}\n`)).toBe(true);
  expect(run.err.trimEnd().split('\n')).toHaveLength(1);
  expect(run.err).not.toContain('Resolution note');
});

test('without --tls the same server answers (exit 0)', async () => {
  expect(await runDispatchctl(['--address', d.address, 'tools', 'list'])).toMatchObject({ code: 0, err: '' });
});
