import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createScratchDirs, type ScratchDirs, type ScratchDirsOptions } from '../../src/session';

// Processes sharing a temp directory judge each other's roots by the owner's own heartbeat, which
// it records in its root (`.owner`): a root is left behind once unchanged for two of its owner's
// heartbeats and a minute, whatever the settings of the process that sweeps; a root without an
// owner file (an earlier version's) once unchanged for 24 h 20 min.

let base: string;
const open: ScratchDirs[] = [];
const scratch = (options: Omit<ScratchDirsOptions, 'dir'> = {}) => {
  const dirs = createScratchDirs({ dir: base, ...options });
  open.push(dirs);
  return dirs;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Sets a path's mtime `ms` in the past. */
const age = (path: string, ms: number) => {
  const at = (Date.now() - ms) / 1000;
  utimesSync(path, at, at);
};
/** A root of a process that is gone, with an owner file of `owner` text when given, unchanged for `ms`. */
const leftover = (name: string, ms: number, owner?: string) => {
  const path = join(base, name);
  mkdirSync(path, { mode: 0o700 });
  writeFileSync(join(path, 'work.txt'), 'data');
  if (owner !== undefined) writeFileSync(join(path, '.owner'), owner);
  age(path, ms);
  return path;
};
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'scratch-owners-'));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((dirs) => dirs.close()));
  rmSync(base, { recursive: true, force: true });
});

test("a process with short settings leaves the root of a live process on the defaults, a live session's file included", async () => {
  const live = scratch();
  const dir = await live.get('t', 'live-session');
  writeFileSync(join(dir, 'work.txt'), 'important');
  // Between two of its heartbeats (every 10 min): 5 min since the last.
  age(dirname(dir), 5 * MINUTE);
  await scratch({ ttlMs: 1000, sweepIntervalMs: 500 }).sweep();
  expect(readFileSync(join(dir, 'work.txt'), 'utf8')).toBe('important');
  expect(await live.get('t', 'live-session')).toBe(dir);
});

test("a root is left behind after two of its owner's heartbeats and a minute, whatever the sweeper's settings", async () => {
  const gone = leftover('dispatch-scratch-G0ne01', 2 * MINUTE + 5000, JSON.stringify({ heartbeatMs: 30_000 }));
  const recent = leftover('dispatch-scratch-L1ve01', 2 * MINUTE - 5000, JSON.stringify({ heartbeatMs: 30_000 }));
  // A process on the defaults (24 h TTL, 10 min sweeps) judges them by their owners' 30 s.
  await scratch().sweep();
  expect(existsSync(gone)).toBe(false);
  expect(existsSync(join(recent, 'work.txt'))).toBe(true);
});

test('a root without a sound owner file is left behind after 24 h 20 min unchanged, whatever the settings', async () => {
  const ancient = leftover('dispatch-scratch-An0ld1', 24 * HOUR + 21 * MINUTE);
  const hourOld = leftover('dispatch-scratch-H0ur01', HOUR);
  const badFile = leftover('dispatch-scratch-Bad001', HOUR, JSON.stringify({ heartbeatMs: 0 }));
  const notJson = leftover('dispatch-scratch-Bad002', HOUR, 'heartbeat: 1');
  const linked = leftover('dispatch-scratch-Bad003', HOUR);
  writeFileSync(join(base, 'elsewhere.json'), JSON.stringify({ heartbeatMs: 1 }));
  rmSync(join(linked, 'work.txt'));
  symlinkSync(join(base, 'elsewhere.json'), join(linked, '.owner'));
  age(linked, HOUR);
  await scratch({ ttlMs: 1000, sweepIntervalMs: 500 }).sweep();
  expect(existsSync(ancient)).toBe(false);
  for (const path of [hourOld, badFile, notJson, linked]) expect(existsSync(path)).toBe(true);
});

test("a process records its heartbeat in its root's owner file and touches the root at each", async () => {
  const dirs = scratch({ ttlMs: 10_000, sweepIntervalMs: 100 });
  const root = dirname(await dirs.get('t', 's'));
  const owner = join(root, '.owner');
  expect(JSON.parse(readFileSync(owner, 'utf8'))).toEqual({ heartbeatMs: 100 });
  expect(lstatSync(owner).mode & 0o777).toBe(0o600);
  age(root, HOUR);
  for (let i = 0; i < 40 && lstatSync(root).mtimeMs < Date.now() - MINUTE; i++) await sleep(25);
  expect(lstatSync(root).mtimeMs).toBeGreaterThan(Date.now() - MINUTE);
});
