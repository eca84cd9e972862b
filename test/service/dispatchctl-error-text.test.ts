// dispatchctl's own error messages quote what a file holds: a turn file's key (`calls[0].KEY:
// unknown key`), the text around a JSON syntax error (V8 quotes it), a YAML key of `tools
// register`. A turn file is often a model's output saved or piped (`dispatch -`), and its ESC, BEL
// or CR reached the terminal raw (OSC 0 sets the window title, OSC 52 the clipboard). They are
// now escaped as every other text a model or a client wrote. The real server on port 0.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startDispatch, type TestDispatch } from '../helpers/servers';

jest.setTimeout(30_000);

/** A character a terminal acts on, but LF and TAB (the usage text after a message keeps its lines). */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;
/** Sets the terminal's window title, then its clipboard (OSC 52). */
const TITLE = '\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07';

let d: TestDispatch;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctl-error-text-'));
  d = await startDispatch('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
});
afterAll(async () => {
  await d.close();
  rmSync(dir, { recursive: true, force: true });
});

const ctl = dispatchctlAt(() => d.address);

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

test.each([
  ['a turn file whose call has an unknown key holding escapes', 1, ['dispatch', 'key.json'], 'key.json', JSON.stringify({ calls: [{ name: 'echo', [`args${TITLE}`]: {} }] })],
  ['a turn file with an unknown top-level key holding a CR and a bidi override', 1, ['dispatch', 'top.json'], 'top.json', JSON.stringify({ calls: [], [`x\r\u202eevil`]: 1 })],
  ['a turn file that is no JSON, around escapes', 1, ['dispatch', 'bad.json'], 'bad.json', `{"calls":[${TITLE}]}`],
  ['a tools file with a key holding escapes', 1, ['tools', 'register', 'tools.yaml'], 'tools.yaml', `tools:\n  - name: shout\n    "${TITLE.replace(/\x1b/g, '\\e').replace(/\x07/g, '\\a')}": 1\n    builtin: { name: echo }\n`],
])('%s: exit %i, the message with them escaped, never raw', async (_what, exit, command, name, text) => {
  const path = file(name, text);
  const run = await ctl(...command.map((arg) => (arg === name ? path : arg)));
  expect(run).toMatchObject({ code: exit, out: '' });
  expect(run.err).toMatch(/^dispatchctl: /);
  expect(run.err).not.toMatch(RAW_CONTROL);
  expect(run.err).toMatch(/\\u(001b|000d)/);
});
