// `--session ""` (a shell's unset variable) went to the server, which refused the turn
// (`INVALID_ARGUMENT: session_id is required`, exit 1); `--token ""` sent no token without a word,
// `--tls-ca ""` failed as a file that cannot be read. An empty value of a flag that needs one is
// now a usage error (2) before anything is sent, as dispatchd refuses its own. `events --tool ""`
// is not: it asks for the events with no tool (events-no-tool.test.ts). The compiled CLI
// (`npm run build` first) against the real server on port 0.
import { runDispatchctl } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';

jest.setTimeout(30_000);

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
});
afterAll(() => d.close());

const HINT = "run 'dispatchctl --help' for usage";
const echoCalls = async () => (await d.registry.getToolStats({ tool: 'echo' })).stats[0]?.calls ?? 0n;

test.each([
  [['--session', '', 'call', 'echo', '{}'], 'session'],
  [['--session=', 'dispatch', '-'], 'session'],
  [['--session', '', 'events'], 'session'],
  [['--session', '', 'approvals'], 'session'],
  [['--token', '', 'tools', 'list'], 'token'],
  [['--tls-ca', '', 'tools', 'list'], 'tls-ca'],
  [['--tls-cert', '', '--tls-key', 'k.pem', 'tools', 'list'], 'tls-cert'],
  [['events', '--kind', ''], 'kind'],
  [['approvals', 'resolve', 'x', '--deny', '--reason', ''], 'reason'],
])('%j: exit 2 naming the flag, nothing sent', async (argv, flag) => {
  const before = await echoCalls();
  const run = await runDispatchctl(['--address', d.address, ...argv]);
  expect(run).toEqual({ code: 2, out: '', err: `dispatchctl: --${flag} must not be empty\n${HINT}\n` });
  expect(await echoCalls()).toBe(before);
});

test('approvals --tool "": exit 2 (ListApprovals would read it as any tool)', async () => {
  expect(await runDispatchctl(['--address', d.address, 'approvals', '--tool', ''])).toEqual({
    code: 2,
    out: '',
    err: `dispatchctl: --tool must not be empty (approvals lists the calls of the tool it names)\n${HINT}\n`,
  });
});

test('a session given runs the call (exit 0)', async () => {
  const run = await runDispatchctl(['--address', d.address, '--session', 'given', 'call', 'echo', '{"a": 1}']);
  expect(run).toMatchObject({ code: 0, err: '' });
  expect(run.out).toMatch(/^✓ call_1 echo /);
});
