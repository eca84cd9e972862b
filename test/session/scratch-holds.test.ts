import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import type { BuiltinTool } from '../../src/executors';
import { createScratchDirs, type ScratchDirsOptions } from '../../src/session';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// A built-in's scratch directory is held while the built-in runs: the maxDirs bound evicts only
// directories no running call holds, and refuses a new one while calls hold them all; expiry passes
// over a held directory too. A hold ends when the built-in settles.

let base: string;
let d: TestDispatch | undefined;
const waiting = new Map<string, () => void>();
const arrived = new Map<string, () => void>();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes part1, waits (when `wait`) until the test lets its session go, then writes part2. */
const scr: BuiltinTool = async (args, ctx) => {
  const dir = await ctx.scratchDir();
  writeFileSync(join(dir, 'part1'), 'x');
  if ((args as { wait?: boolean }).wait) {
    const go = new Promise<void>((resolve) => waiting.set(ctx.sessionId, resolve));
    arrived.get(ctx.sessionId)?.();
    await go;
  }
  writeFileSync(join(dir, 'part2'), 'x');
  return JSON.stringify({ dir, files: readdirSync(dir).sort() });
};

const start = async (options: Omit<ScratchDirsOptions, 'dir'>) => {
  d = await startDispatch(`tools:\n  - name: scr\n    effect: read_only\n    skip_memoize: true\n    timeout_ms: 20000\n    builtin: { name: scr }\n`, {
    builtins: new Map([['scr', scr]]),
    scratch: createScratchDirs({ dir: base, ...options }),
  });
};
const call = async (sessionId: string, wait = false) =>
  (await d!.dispatch.dispatch({ sessionId, calls: [{ id: 'c', name: 'scr', arguments: JSON.stringify({ wait }) }] })).results[0]!;
/** Starts a call of `sessionId` that holds its directory until {@link letGo}; resolves once it has it. */
const holding = async (sessionId: string) => {
  const there = new Promise<void>((resolve) => arrived.set(sessionId, resolve));
  const result = call(sessionId, true);
  await there;
  return { result };
};
const letGo = (sessionId: string) => waiting.get(sessionId)!();

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'scratch-holds-'));
});
afterEach(async () => {
  for (const go of waiting.values()) go();
  waiting.clear();
  arrived.clear();
  await d?.close();
  d = undefined;
  rmSync(base, { recursive: true, force: true });
});

test('past maxDirs the least recently used directory no call holds goes, not the running call\'s', async () => {
  await start({ maxDirs: 2 });
  const a = await holding('A');
  const b = await call('B');
  expect(b.isError).toBe(false);
  expect((await call('C')).isError).toBe(false);
  // B went, the least recently used one that no call holds (its removal is not waited for).
  const { dir } = JSON.parse(b.output) as { dir: string };
  for (let i = 0; i < 40 && existsSync(dir); i++) await sleep(50);
  expect(existsSync(dir)).toBe(false);
  letGo('A');
  const result = await a.result;
  expect(result.isError).toBe(false);
  expect(JSON.parse(result.output).files).toEqual(['part1', 'part2']);
});

test('while calls hold every directory maxDirs allows, a new session\'s call fails with a clear message', async () => {
  await start({ maxDirs: 1 });
  const a = await holding('A');
  const refused = await call('B');
  expect(refused.isError).toBe(true);
  expect(refused.error?.kind).toBe(ErrorKind.UNEXPECTED);
  expect(refused.error?.message).toContain('no scratch directory for this session: all 1 of this process (maxDirs) are in use by calls running now; try again once one ends');
  letGo('A');
  const { dir, files } = JSON.parse((await a.result).output) as { dir: string; files: string[] };
  expect(files).toEqual(['part1', 'part2']);
  // Held no more: the next session's call evicts it.
  expect((await call('B')).isError).toBe(false);
  for (let i = 0; i < 40 && existsSync(dir); i++) await sleep(50);
  expect(existsSync(dir)).toBe(false);
});

test('expiry passes over a directory a running call holds, and takes it once the call has ended', async () => {
  await start({ ttlMs: 300, sweepIntervalMs: 100 });
  const a = await holding('A');
  await sleep(700);
  letGo('A');
  const result = await a.result;
  expect(JSON.parse(result.output).files).toEqual(['part1', 'part2']);
  const { dir } = JSON.parse(result.output) as { dir: string };
  for (let i = 0; i < 40 && existsSync(dir); i++) await sleep(50);
  expect(existsSync(dir)).toBe(false);
});
