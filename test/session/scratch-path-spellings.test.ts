// A built-in's thrown error named its scratch directory `<scratch>/...`, but a path spelt
// `dir/../dir/...` or as a `file:` URL, and anything the built-in returned (a listing, a resolved
// path), still carried the server's absolute path to the model. Now those are rewritten too.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BuiltinTool } from '../../src/executors';
import { createScratchDirs, hideScratchPaths } from '../../src/session';
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
const call = async (name: string) => (await d!.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name, arguments: '{}' }] })).results[0]!;

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
