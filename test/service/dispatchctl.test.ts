import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startDispatch, type TestDispatch } from '../helpers/servers';

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch(`
tools:
  - name: echo
    description: Returns its arguments.
    effect: read_only
    builtin: { name: echo }
  - name: loop
    effect: read_only
    loop: { stop_threshold: 1 }
    builtin: { name: echo }
`);
});
afterAll(() => d.close());

const ctl = dispatchctlAt(() => d.address);

test('tools list prints one readable line per tool', async () => {
  const { code, out } = await ctl('tools', 'list');
  expect(code).toBe(0);
  expect(out).toMatch(/^echo\s+read-only\s+builtin\s+Returns its arguments\.$/m);
  expect(out).toMatch(/^loop\s+read-only\s+builtin/m);
});

test('call prints the result and its attempts', async () => {
  const { code, out } = await ctl('call', 'echo', '{"a":1}');
  expect(code).toBe(0);
  expect(out).toMatch(/^✓ call_1 echo \(1 attempt, \d+ ms\)\n  │ \{"a":1\}$/);
  const unknown = await ctl('call', 'ecko', '{}');
  // The turn ran, and its result is an error: 3, for scripts.
  expect(unknown.code).toBe(3);
  expect(unknown.out).toContain('✗ call_1 ecko: UNKNOWN_TOOL');
  expect(unknown.out).toContain('did you mean \\"echo\\"?');
});

test('dispatch FILE runs a turn; a hard error exits non-zero with the status', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctl-'));
  const turn = join(dir, 'turn.json');
  writeFileSync(turn, JSON.stringify({ session_id: 'ctl', calls: [{ id: 'a', name: 'echo', arguments: { x: 1 } }, { id: 'b', name: 'echo', arguments: '{"y":2}' }] }));
  const ok = await ctl('dispatch', turn);
  expect(ok.code).toBe(0);
  expect(ok.out.split('\n').filter((l) => l.startsWith('✓')).map((l) => l.split(' ')[1])).toEqual(['a', 'b']);
  const looping = join(dir, 'loop.json');
  writeFileSync(looping, JSON.stringify({ session_id: 'ctl-loop', calls: [{ name: 'loop', arguments: {} }, { name: 'loop', arguments: {} }] }));
  const hard = await ctl('dispatch', looping);
  expect(hard.code).toBe(1);
  expect(hard.err).toMatch(/^dispatchctl: ABORTED: loop detected/);
});

test('usage errors exit 2', async () => {
  expect((await ctl('frobnicate')).code).toBe(2);
  expect((await ctl('call')).code).toBe(2);
});
