import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';

// dispatchctl's registry commands against the whole app on loopback: tools register and remove
// (RegisterTools, RemoveTool) and stats (GetToolStats, with its alerts).

let d: TestDispatch;
let dir: string;
beforeAll(async () => {
  d = await startApp(`
tools:
  - name: echo
    effect: read_only
    input_schema: '{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}'
    builtin: { name: echo }
`);
  dir = mkdtempSync(join(tmpdir(), 'ctl-registry-'));
});
afterAll(() => d.close());

const ctl = dispatchctlAt(() => d.address);

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const SHOUT = `tools:
  - name: shout
    description: Says it loudly.
    effect: read_only
    builtin: { name: echo }
  - name: whisper
    effect: read_only
    builtin: { name: echo }
`;

test('tools register FILE registers the tools of a config-style YAML list; again needs --replace; tools remove removes one', async () => {
  const tools = file('tools.yaml', SHOUT);
  const registered = await ctl('tools', 'register', tools);
  expect(registered).toMatchObject({ code: 0, out: 'registered 2 tools: shout, whisper' });
  expect((await ctl('tools', 'list')).out).toMatch(/^shout\s+read-only\s+builtin\s+Says it loudly\.$/m);
  expect((await ctl('call', 'shout', '{"a":1}')).out).toContain('✓ call_1 shout');

  const again = await ctl('tools', 'register', tools);
  expect(again.code).toBe(1);
  expect(again.err).toMatch(/^dispatchctl: ALREADY_EXISTS: .*shout/);
  expect((await ctl('tools', 'register', tools, '--replace')).code).toBe(0);

  expect(await ctl('tools', 'remove', 'whisper')).toMatchObject({ code: 0, out: 'removed whisper' });
  expect((await ctl('tools', 'list')).out).not.toMatch(/^whisper/m);
  // A tool of the config file is not removable by RPC.
  expect(await ctl('tools', 'remove', 'echo')).toMatchObject({ code: 1, out: 'no tool echo was registered by RPC' });
});

test('tools register refuses a file with a bad tool or no tools, naming the problem, and registers nothing', async () => {
  const bad = await ctl('tools', 'register', file('bad.yaml', 'tools:\n  - name: x\n    effect: sometimes\n    builtin: { name: echo }\n'));
  expect(bad.code).toBe(1);
  expect(bad.err).toMatch(/bad\.yaml.*tools\[0\]/);
  const empty = await ctl('tools', 'register', file('empty.yaml', 'tools: []\n'));
  // A file it cannot use exits 1, as the README says (2 before, with the whole usage text).
  expect(empty.code).toBe(1);
  expect(empty.err).toContain('has no tools');
  expect(await ctl('tools', 'register', 'no-such-file.yaml')).toMatchObject({ code: 1, err: expect.stringContaining('cannot read no-such-file.yaml: ') });
  expect((await ctl('tools', 'register')).code).toBe(2);
  expect((await ctl('tools', 'remove')).code).toBe(2);
  expect((await ctl('tools', 'list')).out).not.toMatch(/^x\s/m);
});

test('stats prints calls, breaker, health and the six rates per tool over the window they cover, and the rates past their thresholds as alerts', async () => {
  // Two valid calls, two that fail validation: a validation failure rate of 50% (> 15%).
  for (const args of ['{"n":1}', '{"n":2}', '{"n":"one"}', '{}']) await ctl('--session', 'stats', 'call', 'echo', args);
  const { code, out } = await ctl('stats', 'echo');
  expect(code).toBe(0);
  const [head, rates, ...alerts] = out.split('\n');
  expect(head).toMatch(/^echo\s+4 calls {2}breaker closed {2}health \d\.\d\d$/);
  expect(rates).toBe('  last 15 min, 4 calls: validation 50.0%  timeout 0.0%  retry 0.0%  idempotent 0.0%  bounding 0.0%  unexpected 0.0%  errors 50.0%');
  expect(alerts).toEqual([expect.stringMatching(/^ {2}ALERT validation.*50(\.0)?% > 15%$/)]);
  // Every tool without a name.
  expect((await ctl('stats')).out).toMatch(/^echo\s+4 calls/m);
});
