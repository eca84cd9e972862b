// A turn file dispatchctl cannot use (no JSON, an unknown key, a bad "mode", a number that does not
// fit) exited 2, the usage-error code, and printed the whole ~50-line usage text after the message,
// though the command line was right: the README gives 1 to "a file it is given [that] cannot be
// read or used (... a turn or tool file)". Now exit 1 and the one message naming the file and what
// is wrong. The compiled CLI (`npm run build` first) against the real server on port 0.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDispatchctl } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';

jest.setTimeout(30_000);

let d: TestDispatch;
const dir = mkdtempSync(join(tmpdir(), 'ctl-file-exit-'));
beforeAll(async () => {
  d = await startApp('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
});
afterAll(async () => {
  await d.close();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

test.each([
  ['no JSON', 'syntax.json', '{"calls": [', 'not valid JSON: '],
  ['a misspelt key of a call', 'nme.json', '{"calls": [{"nme": "echo", "arguments": {}}]}', 'calls[0].nme: unknown key "nme" (did you mean name?)'],
  ['a bad mode', 'mode.json', '{"mode": "paralel", "calls": [{"name": "echo", "arguments": {}}]}', '"mode" must be "parallel" or "sequential"'],
  ['a turn number that does not fit', 'turn.json', '{"turn": -1, "calls": [{"name": "echo", "arguments": {}}]}', '"turn" must be a whole number from 0 to 4294967295, got -1'],
  ['no calls list', 'calls.json', '{"session_id": "s"}', '"calls" must be a list of {"id","name","arguments"}'],
])('a turn file holding %s: exit 1, one line naming the file and the problem, no usage text', async (_what, name, text, problem) => {
  const path = file(name, text);
  const run = await runDispatchctl(['--address', d.address, 'dispatch', path]);
  expect({ code: run.code, out: run.out }).toEqual({ code: 1, out: '' });
  expect(run.err).toContain(`dispatchctl: ${path}: ${problem}`);
  expect(run.err.trimEnd().split('\n')).toHaveLength(1);
  expect(run.err).not.toContain('usage');
});

test('a turn file that is not there: exit 1, naming it and why, plainly', async () => {
  const path = join(dir, 'missing.json');
  expect(await runDispatchctl(['--address', d.address, 'dispatch', path])).toEqual({ code: 1, out: '', err: `dispatchctl: cannot read ${path}: no such file\n` });
});
