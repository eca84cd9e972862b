// Audit of dispatchctl's --help against what it takes: `--parallel` (dispatch FILE runs the turn in
// parallel, over the file's mode) was taken but not in the help, nor `-f` for --follow.
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DISPATCHCTL_FLAGS, USAGE } from '../../src/cli/dispatchctl-usage';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startApp } from '../helpers/servers';

test('--help names every flag dispatchctl takes, and each short form', () => {
  for (const [name, spec] of Object.entries(DISPATCHCTL_FLAGS)) {
    if (name === 'help') continue;
    expect(USAGE).toContain(`--${name}`);
    if ('short' in spec) expect(USAGE).toContain(`-${spec.short}`);
  }
});

describe('dispatch --parallel, as the help says', () => {
  let t: Awaited<ReturnType<typeof startApp>>;
  const dir = mkdtempSync(path.join(tmpdir(), 'ctl-parallel-'));
  const ctl = dispatchctlAt(() => t.address);
  beforeAll(async () => {
    t = await startApp('tools:\n  - name: sleep\n    effect: read_only\n    concurrency_safe: true\n    skip_memoize: true\n    input_schema: \'{"type":"object"}\'\n    builtin: { name: sleep }\n');
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('runs a turn whose file says sequential in parallel', async () => {
    const file = path.join(dir, 'turn.json');
    writeFileSync(file, JSON.stringify({ mode: 'sequential', calls: [{ id: 'a', name: 'sleep', arguments: { ms: 400, n: 1 } }, { id: 'b', name: 'sleep', arguments: { ms: 400, n: 2 } }] }));
    const started = Date.now();
    const run = await ctl('--parallel', 'dispatch', file);
    expect(run.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(780);
    expect(USAGE).toMatch(/--parallel +.*parallel/);
  });
});
