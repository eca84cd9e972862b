import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createScratchDirs, DEFAULT_MAX_SCRATCH_DIRS, DEFAULT_SCRATCH_TTL_MS, resolveScratchDirsOptions, type ScratchDirs, type ScratchDirsOptions } from '../../src/session';

// Directories of sessions never ended do not stay forever: a sweep (when the directories are
// created, then on a timer) removes those unused for ttlMs and the roots of processes that did not
// close, a bounded number each time; past maxDirs the least recently used session's goes.

let base: string;
const open: ScratchDirs[] = [];
const scratch = (options: Omit<ScratchDirsOptions, 'dir'> = {}) => {
  const dirs = createScratchDirs({ dir: base, ...options });
  open.push(dirs);
  return dirs;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Session directories in a root: all but its owner file (`.owner`). */
const count = (root: string) => (existsSync(root) ? readdirSync(root).filter((name) => name !== '.owner').length : 0);

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'scratch-expiry-'));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((dirs) => dirs.close()));
  rmSync(base, { recursive: true, force: true });
});

test('a sweep removes the directories unused for ttlMs and keeps those used since', async () => {
  const dirs = scratch({ ttlMs: 400 });
  const kept = await dirs.get('t', 'kept');
  const idle = await dirs.get('t', 'idle');
  await sleep(250);
  await dirs.get('t', 'kept');
  await sleep(250);
  await dirs.sweep();
  expect(existsSync(idle)).toBe(false);
  expect(existsSync(kept)).toBe(true);
});

test('the timer sweeps on its own', async () => {
  const dirs = scratch({ ttlMs: 200, sweepIntervalMs: 100 });
  const dir = await dirs.get('t', 's');
  for (let i = 0; i < 40 && existsSync(dir); i++) await sleep(50);
  expect(existsSync(dir)).toBe(false);
});

test('one sweep removes at most maxRemovalsPerSweep directories', async () => {
  // The sweeps are this test's own: the timer's (every ttlMs, 100 ms here) raced them (2 of 12 runs).
  const interval = jest.spyOn(global, 'setInterval').mockImplementation((() => ({ unref: () => undefined })) as never);
  const dirs = scratch({ ttlMs: 100, maxRemovalsPerSweep: 2 });
  interval.mockRestore();
  const root = dirname(await dirs.get('t', 's0'));
  for (let i = 1; i < 5; i++) await dirs.get('t', `s${i}`);
  await sleep(150);
  await dirs.sweep();
  expect(count(root)).toBe(3);
  await dirs.sweep();
  expect(count(root)).toBe(1);
  await dirs.sweep();
  expect(count(root)).toBe(0);
});

test('past maxDirs the least recently used directory is removed', async () => {
  const dirs = scratch({ maxDirs: 2 });
  const s1 = await dirs.get('t', 's1');
  const s2 = await dirs.get('t', 's2');
  await dirs.get('t', 's1');
  const s3 = await dirs.get('t', 's3');
  await dirs.remove('t', 's2');
  expect([existsSync(s1), existsSync(s2), existsSync(s3)]).toEqual([true, false, true]);
  expect(count(dirname(s1))).toBe(2);
});

test('the first sweep removes roots left behind, and only private, old ones', async () => {
  // Their owners marked them alive every 10 s (their owner files say): 3 min unchanged is left behind.
  const old = (Date.now() - 3 * 60_000) / 1000;
  const leftover = (name: string, mode = 0o700) => {
    const path = join(base, name);
    mkdirSync(path, { mode });
    mkdirSync(join(path, 'inner'), { mode: 0o700 });
    writeFileSync(join(path, 'inner', 'work.txt'), 'data');
    writeFileSync(join(path, '.owner'), JSON.stringify({ heartbeatMs: 10_000 }));
    utimesSync(path, old, old);
    return path;
  };
  const stale = leftover('dispatch-scratch-Ab12Cd');
  const fresh = join(base, 'dispatch-scratch-Fr35h0');
  mkdirSync(fresh, { mode: 0o700 });
  const shared = leftover('dispatch-scratch-W1d3r0', 0o755);
  const unrelated = leftover('dispatch-scratch-other-name');
  const target = leftover('target');
  symlinkSync(target, join(base, 'dispatch-scratch-L1nk00'));
  utimesSync(join(base, 'dispatch-scratch-L1nk00'), old, old);
  const dirs = scratch({ ttlMs: 30_000, sweepIntervalMs: 10_000 });
  await dirs.sweep();
  expect(existsSync(stale)).toBe(false);
  for (const path of [fresh, shared, unrelated, join(target, 'inner', 'work.txt')]) expect(existsSync(path)).toBe(true);
  expect(lstatSync(join(base, 'dispatch-scratch-L1nk00')).isSymbolicLink()).toBe(true);
});

test("a live process's root is kept fresh, so another's sweep leaves it", async () => {
  const live = scratch({ ttlMs: 1000, sweepIntervalMs: 200 });
  const dir = await live.get('t', 's');
  writeFileSync(join(dir, 'work.txt'), 'data');
  // Used all along (so not expired), in a root nothing is created in after its first second.
  for (let waited = 0; waited < 1600; waited += 200) {
    await sleep(200);
    await live.get('t', 's');
  }
  await scratch({ ttlMs: 1000, sweepIntervalMs: 200 }).sweep();
  expect(existsSync(join(dir, 'work.txt'))).toBe(true);
});

test('options have named defaults and bad values are refused with exact messages', () => {
  expect(DEFAULT_SCRATCH_TTL_MS).toBe(86_400_000);
  expect(DEFAULT_MAX_SCRATCH_DIRS).toBe(1000);
  expect(resolveScratchDirsOptions({ dir: '/d' })).toEqual({ dir: '/d', ttlMs: 86_400_000, maxDirs: 1000, sweepIntervalMs: 600_000, maxRemovalsPerSweep: 100, logger: undefined });
  expect(resolveScratchDirsOptions({ dir: '/d', ttlMs: 1000 }).sweepIntervalMs).toBe(1000);
  expect(() => resolveScratchDirsOptions({ ttlMs: 0 })).toThrow('scratch directories: ttlMs must be an integer from 1 to 9007199254740991, got 0');
  expect(() => resolveScratchDirsOptions({ maxDirs: 1.5 })).toThrow('scratch directories: maxDirs must be an integer from 1 to 9007199254740991, got 1.5');
  expect(() => resolveScratchDirsOptions({ ttlMs: 1000, sweepIntervalMs: 2000 })).toThrow('scratch directories: sweepIntervalMs must be an integer from 1 to 1000, got 2000');
  expect(() => resolveScratchDirsOptions({ maxRemovalsPerSweep: -1 })).toThrow('scratch directories: maxRemovalsPerSweep must be an integer from 1 to 9007199254740991, got -1');
  expect(() => resolveScratchDirsOptions({ dir: '' })).toThrow('scratch directories: dir must be a non-empty path, got ""');
});
