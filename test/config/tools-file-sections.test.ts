import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseToolsFile } from '../../src/config';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';

// `dispatchctl tools register FILE` sends the file's tools: (RegisterTools takes tools alone). A
// `policies:` or `limits:` beside them was dropped without a word and the command said "registered
// 1 tool", so a user took a block rule for active. Such a file is refused, naming the section.

let d: TestDispatch;
let dir: string;
beforeAll(async () => {
  d = await startApp('tools: []\n');
  dir = mkdtempSync(join(tmpdir(), 'tools-file-'));
});
afterAll(() => d.close());

const ctl = dispatchctlAt(() => d.address);
const TOOL = 'tools:\n  - name: wire\n    effect: side_effect\n    builtin: { name: echo }\n';

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

test.each([
  ['policies', 'policies:\n  - match: { tool: wire }\n    action: block\n    reason: no wires today\n'],
  ['limits', 'limits:\n  max_calls_per_turn: 1\n'],
  ['auth', 'auth:\n  tokens: []\n'],
  ['registry', 'registry:\n  http_deny: [private]\n'],
])('a file with %s: beside its tools is refused, exit 1, naming the section; no tool is registered', async (section, text) => {
  const path = file(`${section}.yaml`, `${TOOL}${text}`);
  const run = await ctl('tools', 'register', path);
  expect(run).toMatchObject({
    code: 1,
    out: '',
    err: `dispatchctl: ${path}: ${section}: only tools: can be registered at runtime; ${section}: is set in dispatchd's config file (--config), read when dispatchd starts: remove it from this file`,
  });
  expect((await d.registry.listTools({})).tools.map((t) => t.name)).not.toContain('wire');
});

test('the section is refused wherever it stands, empty too; an unknown one gets a did-you-mean', () => {
  expect(() => parseToolsFile(`policies: []\n${TOOL}`, 'more.yaml')).toThrow("more.yaml: policies: only tools: can be registered at runtime; policies: is set in dispatchd's config file (--config), read when dispatchd starts: remove it from this file");
  expect(() => parseToolsFile('tool:\n  - { name: a, builtin: { name: echo } }\n', 'more.yaml')).toThrow('more.yaml: tool: unknown key "tool" (did you mean tools?)');
  expect(() => parseToolsFile(`${TOOL}notes: hi\n`, 'more.yaml')).toThrow('more.yaml: notes: unknown key "notes" (expected one of tools; a tools file holds a tools: list alone)');
  expect(() => parseToolsFile('- name: a\n', 'more.yaml')).toThrow('more.yaml: the file must be a YAML mapping with a tools: list');
});

test('a file of tools alone registers as before', async () => {
  expect(await ctl('tools', 'register', file('tools.yaml', TOOL))).toMatchObject({ code: 0, out: 'registered 1 tool: wire' });
  expect(parseToolsFile(TOOL, 'tools.yaml').map((spec) => spec.name)).toEqual(['wire']);
});
