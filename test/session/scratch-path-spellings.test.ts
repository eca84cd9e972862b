// A built-in's thrown error named its scratch directory `<scratch>/...`, but a path spelt
// `dir/../dir/...` or as a `file:` URL, and anything the built-in returned (a listing, a resolved
// path), still carried the server's absolute path to the model. Now those are rewritten too.
// Then every path under the shared root (`/tmp` by default) in output was rewritten, even in a
// file's contents (`/var/tmp/out.csv` read `/var<scratch root>/out.csv`: found in a review): output
// now names only the call's own directory, at path boundaries.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BuiltinTool } from '../../src/executors';
import { createScratchDirs, hideScratchPaths } from '../../src/session';
import { hideScratchOutput } from '../../src/session/scratch-paths';
import { SILENT_LOGGER } from '../../src/log';
import { startDispatch, type TestDispatch } from '../helpers/servers';

const builtins = new Map<string, BuiltinTool>([
  ['dotdot', async (_args, ctx) => {
    const dir = await ctx.scratchDir();
    return readFileSync(`${dir}/../${basename(dir)}/./missing.txt`, 'utf8');
  }],
  ['url', async (_args, ctx) => {
    throw new Error(`cannot open ${pathToFileURL(join(await ctx.scratchDir(), 'a b.txt')).href}`);
  }],
  ['list', async (_args, ctx) => {
    const dir = await ctx.scratchDir();
    writeFileSync(join(dir, 'x.txt'), 'x');
    return JSON.stringify({ dir, files: readdirSync(dir).map((name) => join(dir, name)), url: pathToFileURL(join(dir, 'x.txt')).href });
  }],
  ['write_file', async (args, ctx) => {
    const { path, content } = args as { path: string; content: string };
    writeFileSync(join(await ctx.scratchDir(), path), content);
    return 'written';
  }],
  ['read_file', async (args, ctx) => readFileSync(join(await ctx.scratchDir(), (args as { path: string }).path), 'utf8')],
  ['resolved', async (_args, ctx) => {
    const real = realpathSync(await ctx.scratchDir());
    return `${real} ${pathToFileURL(join(real, 'x.txt')).href} ${real}//y/../z`;
  }],
]);
const YAML = `tools:\n${[...builtins.keys()].map((name) => `  - name: ${name}\n    effect: read_only\n    skip_memoize: true\n    builtin: { name: ${name} }\n`).join('')}`;

let base: string;
let d: TestDispatch | undefined;
const start = async (dir: string) => {
  d = await startDispatch(YAML, { builtins, scratch: createScratchDirs({ dir, logger: SILENT_LOGGER }) });
};
const call = async (name: string, args: object = {}) =>
  (await d!.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name, arguments: JSON.stringify(args) }] })).results[0]!;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'scratch-path-spellings-'));
});
afterEach(async () => {
  await d?.close();
  d = undefined;
  rmSync(base, { recursive: true, force: true });
});

test('a path spelt dir/../dir/./file in an error is written from <scratch>', async () => {
  await start(base);
  const result = await call('dotdot');
  expect(result.error?.message).toBe("the tool crashed: ENOENT: no such file or directory, open '<scratch>/missing.txt'");
  expect(result.output).not.toContain(base);
});

test('a file: URL of the directory in an error is written from <scratch>, decoded', async () => {
  await start(base);
  const result = await call('url');
  expect(result.error?.message).toBe('the tool crashed: cannot open <scratch>/a b.txt');
  expect(result.output).not.toContain(base);
});

test('what a built-in returns names no server path: a listing, its paths and file: URLs', async () => {
  await start(base);
  const result = await call('list');
  expect(result.isError).toBe(false);
  expect(JSON.parse(result.output)).toEqual({ dir: '<scratch>', files: ['<scratch>/x.txt'], url: '<scratch>/x.txt' });
});

test('through a symlinked base, the real path it returns, its file: URL and another spelling are hidden', async () => {
  mkdirSync(join(base, 'real'));
  symlinkSync(join(base, 'real'), join(base, 'link'));
  await start(join(base, 'link'));
  const result = await call('resolved');
  expect(result.output).toBe('<scratch> <scratch>/x.txt <scratch>/z');
});

test('paths outside the directories and its root are left alone', () => {
  const dir = join(base, 'dispatch-scratch-Ab12Cd', 'sess');
  const text = `see /etc/passwd, file:///usr/lib/../share/x and ${dir}/../other/a`;
  expect(hideScratchPaths(text, [dir])).toBe('see /etc/passwd, file:///usr/lib/../share/x and <scratch root>/dispatch-scratch-Ab12Cd/other/a');
});

test('a file whose contents name paths under the shared root, not in the session directory, round-trips unchanged', async () => {
  await start(base);
  const other = join(base, 'dispatch-scratch-Zz99Yy', 'other-session');
  const content = [
    'import shutil',
    `shutil.copy("${base}/input.csv", "/var${base}/out.csv")  # from ${base}/`,
    `url = "file://${base}/report.html"`,
    `log = "${base}/../${basename(base)}/app.log"`,
    `peer = '${other}/a.txt' x${base}/y ${base}x`,
    '',
  ].join('\n');
  expect((await call('write_file', { path: 'job.py', content })).output).toBe('written');
  const read = await call('read_file', { path: 'job.py' });
  expect(read.isError).toBe(false);
  expect(read.output).toBe(content);
});

test('in output, only the directory itself is rewritten, where a path begins and its name ends', () => {
  const dir = join(base, 'dispatch-scratch-Ab12Cd', 'sess');
  const text = `${dir} "${dir}/a" path=${dir}/b (${dir}). x${dir} ${dir}x ${dir}.bak /var${dir} file://${dir}/c file://${base}/d ${base}/e`;
  expect(hideScratchOutput(text, [dir])).toBe(
    `<scratch> "<scratch>/a" path=<scratch>/b (<scratch>). x${dir} ${dir}x ${dir}.bak /var${dir} <scratch>/c file://${base}/d ${base}/e`,
  );
});

test('in an error, the root is still hidden wherever it is named, as before, and its file: URL', () => {
  const dir = join(base, 'dispatch-scratch-Ab12Cd', 'sess');
  expect(hideScratchPaths(`open '${base}/x' and file://${base}/y`, [dir])).toBe("open '<scratch root>/x' and <scratch root>/y");
  expect(hideScratchPaths(`a/b${base}/../${basename(base)}/z`, [dir])).toBe(`a/b<scratch root>/../${basename(base)}/z`);
});
