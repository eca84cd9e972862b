// `-h` was refused as an unknown option (with the usage, exit 2) and `--version` too, by dispatchctl
// and dispatchd alike. Both now take `-h` as `--help` and print the package's version for
// `--version`, exit 0. The compiled bin/ scripts (`npm run build` first).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDispatchctl } from '../helpers/dispatchctl';

const ROOT = join(__dirname, '..', '..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** dispatchd's bin with `args`: it exits at once for these. */
const dispatchd = (args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin', 'dispatchd.js'), ...args], { encoding: 'utf8', timeout: 15_000, env: { ...process.env, DISPATCH_LISTEN: '', DISPATCH_CONFIG: '' } });

test('dispatchctl -h prints what --help prints, exit 0', async () => {
  const [short, long] = await Promise.all([runDispatchctl(['-h']), runDispatchctl(['--help'])]);
  expect(short).toEqual({ code: 0, out: long.out, err: '' });
  expect(short.out).toMatch(/^usage: dispatchctl /);
  expect(short.out).toContain('--version');
});

test('dispatchctl --version prints the package version, exit 0, even with a command after it', async () => {
  expect(await runDispatchctl(['--version'])).toEqual({ code: 0, out: `dispatchctl ${VERSION}\n`, err: '' });
  expect(await runDispatchctl(['--version', 'tools', 'list', '--address', '127.0.0.1:1'])).toEqual({ code: 0, out: `dispatchctl ${VERSION}\n`, err: '' });
});

test('dispatchd -h prints what --help prints, and --version the package version, exit 0', () => {
  const [short, long, version] = [dispatchd(['-h']), dispatchd(['--help']), dispatchd(['--version'])];
  expect({ code: short.status, out: short.stdout, err: short.stderr }).toEqual({ code: 0, out: long.stdout, err: '' });
  expect(short.stdout).toMatch(/^usage: dispatchd /);
  expect({ code: version.status, out: version.stdout, err: version.stderr }).toEqual({ code: 0, out: `dispatchd ${VERSION}\n`, err: '' });
});
