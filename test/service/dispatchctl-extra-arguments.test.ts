// Arguments past those a command takes were dropped without a word: `end-session a b` ended a
// alone and said so, exit 0; `call echo {"a": 1}` unquoted in a shell sent `{"a":` and blamed the
// model's arguments (exit 3); `dispatch t1.json t2.json` ran t1 alone. They are now a usage error
// (2) naming the first one, before anything runs. The real server on port 0.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';

jest.setTimeout(30_000);

let d: TestDispatch;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctl-extra-'));
  d = await startApp('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
});
afterAll(async () => {
  await d.close();
  rmSync(dir, { recursive: true, force: true });
});

const ctl = dispatchctlAt(() => d.address);

test('end-session with two sessions ends neither and says which argument is one too many', async () => {
  const run = await ctl('end-session', 'a', 'b');
  expect(run.code).toBe(2);
  expect(run.out).toBe('');
  expect(run.err).toMatch(/^dispatchctl: end-session takes SESSION, got also "b" \(quote an argument holding spaces\)\n/);
});

test('call with its JSON split by the shell is refused before it is sent', async () => {
  const run = await ctl('call', 'echo', '{"a":', '1}');
  expect(run).toMatchObject({ code: 2, out: '' });
  expect(run.err).toMatch(/^dispatchctl: call takes TOOL \[JSON\], got also "1}" \(quote an argument holding spaces\)\n/);
});

test.each([
  [['tools', 'list', 'now'], 'tools list takes no arguments, got also "now"'],
  [['tools', 'remove', 'a', 'b'], 'tools remove takes NAME, got also "b"'],
  [['stats', 'echo', 'sleep'], 'stats takes [TOOL], got also "sleep"'],
  [['dispatch', 'one.json', 'two.json'], 'dispatch takes FILE, got also "two.json"'],
  [['read', 'h', '0', '9'], 'read takes HANDLE [OFFSET], got also "9"'],
  [['parse', 'a.txt', 'b.txt'], 'parse takes FILE, got also "b.txt"'],
  [['events', 'extra'], 'events takes no arguments, got also "extra"'],
])('%j is a usage error', async (argv, message) => {
  const run = await ctl(...argv);
  expect(run).toMatchObject({ code: 2, out: '' });
  expect(run.err.split('\n')[0]).toBe(`dispatchctl: ${message} (quote an argument holding spaces)`);
});

test('the arguments a command takes still run it', async () => {
  const turn = join(dir, 'turn.json');
  writeFileSync(turn, JSON.stringify({ calls: [{ id: 'a', name: 'echo', arguments: { n: 1 } }] }));
  expect(await ctl('call', 'echo', '{"a": 1}')).toMatchObject({ code: 0, err: '' });
  expect(await ctl('call', 'echo')).toMatchObject({ code: 0, err: '' });
  expect(await ctl('dispatch', turn)).toMatchObject({ code: 0, err: '' });
  expect(await ctl('end-session', 'a')).toMatchObject({ code: 0, out: 'session a ended' });
  expect(await ctl('stats', 'echo')).toMatchObject({ code: 0, err: '' });
  expect(await ctl('tools', 'list')).toMatchObject({ code: 0, err: '' });
});
