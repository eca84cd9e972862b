// A built-in's error reaches the model and the client: one that failed in its session's scratch
// directory named the server's absolute path (`/tmp/dispatch-scratch-Ab12Cd/3f0e...-9c1d.../notes`),
// and so did a scratch directory that could not be made. The path is now written relative to the
// session's directory (`<scratch>/notes/missing.txt`) or to the scratch root; the log keeps it.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import type { BuiltinTool } from '../../src/executors';
import type { Logger } from '../../src/log';
import { createScratchDirs } from '../../src/session';
import { startDispatch, type TestDispatch } from '../helpers/servers';

const crash: BuiltinTool = async (_args, ctx) => readFileSync(join(await ctx.scratchDir(), 'notes', 'missing.txt'), 'utf8');
const refuse: BuiltinTool = async (_args, ctx) => {
  const dir = await ctx.scratchDir();
  throw new DispatchError(ErrorKind.TOOL_ERROR, `cannot parse ${join(dir, 'a.json')}`, { phase: 'after', suggestion: `fix ${join(dir, 'a.json')} first` });
};
const wrote: BuiltinTool = async (_args, ctx) => {
  writeFileSync(join(await ctx.scratchDir(), 'x'), 'x');
  return 'ok';
};
const realCrash: BuiltinTool = async (_args, ctx) => readFileSync(join(realpathSync(await ctx.scratchDir()), 'missing.txt'), 'utf8');
const NAMES = ['crash', 'refuse', 'wrote', 'realCrash'];
const YAML = `tools:\n${NAMES.map((name) => `  - name: ${name}\n    effect: read_only\n    skip_memoize: true\n    builtin: { name: ${name} }\n`).join('')}`;

let base: string;
let d: TestDispatch | undefined;
const warnings: string[] = [];
const logger: Logger = { debug() {}, info() {}, warn: (message, fields) => void warnings.push(`${message} ${JSON.stringify(fields)}`), error() {} };
const start = async (dir: string) => {
  d = await startDispatch(YAML, { builtins: new Map([['crash', crash], ['refuse', refuse], ['wrote', wrote], ['realCrash', realCrash]]), scratch: createScratchDirs({ dir, logger }) });
};
const call = async (name: string) => (await d!.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name, arguments: '{}' }] })).results[0]!;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'scratch-error-paths-'));
  warnings.length = 0;
});
afterEach(async () => {
  await d?.close();
  d = undefined;
  rmSync(base, { recursive: true, force: true });
});

test("a built-in that crashed on a file of its session's directory names it relative to that directory", async () => {
  await start(base);
  const result = await call('crash');
  expect(result.error).toMatchObject({ kind: ErrorKind.UNEXPECTED, message: "the tool crashed: ENOENT: no such file or directory, open '<scratch>/notes/missing.txt'" });
  expect(JSON.parse(result.output)).toMatchObject({ kind: 'UNEXPECTED', message: "the tool crashed: ENOENT: no such file or directory, open '<scratch>/notes/missing.txt'" });
  expect(result.output).not.toContain(base);
});

test("a built-in's own error naming a file of its directory keeps its kind; message and suggestion name it relative", async () => {
  await start(base);
  const result = await call('refuse');
  expect(result.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, message: 'cannot parse <scratch>/a.json', suggestion: 'fix <scratch>/a.json first' });
  expect(result.output).not.toContain(base);
});

test('a scratch directory that cannot be made fails the built-in without the path, which the log keeps', async () => {
  const file = join(base, 'not-a-dir');
  writeFileSync(file, '');
  await start(file);
  const result = await call('wrote');
  expect(result.error?.kind).toBe(ErrorKind.UNEXPECTED);
  expect(result.error?.message).toMatch(/^the tool crashed: ENOTDIR: not a directory, mkdtemp '<scratch root>\/dispatch-scratch-[A-Za-z0-9]{6}'$/);
  expect(result.output).not.toContain(base);
  expect(warnings.filter((w) => w.startsWith('could not make a scratch directory'))).toEqual([expect.stringContaining(`${file}/dispatch-scratch-`)]);
});

test('through a symlinked scratch base, a path the built-in resolved (fs.realpath) is hidden too', async () => {
  mkdirSync(join(base, 'real'));
  symlinkSync(join(base, 'real'), join(base, 'link'));
  await start(join(base, 'link'));
  const result = await call('realCrash');
  expect(result.error?.message).toBe("the tool crashed: ENOENT: no such file or directory, open '<scratch>/missing.txt'");
  expect(result.output).not.toContain(base);
  // The path as given is hidden as before.
  expect((await call('crash')).error?.message).toBe("the tool crashed: ENOENT: no such file or directory, open '<scratch>/notes/missing.txt'");
});

test('a built-in that succeeds is not changed', async () => {
  await start(base);
  expect((await call('wrote')).output).toBe('ok');
});
