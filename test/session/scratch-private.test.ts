import { createHash } from 'node:crypto';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createScratchDirs, type ScratchDirs } from '../../src/session';
import { removeStaleRoots } from '../../src/session/stale-roots';

// Scratch directories live in a root this process made with mkdtemp (mode 0700), so a path another
// local user predicts in the shared temp directory is never used, and what is in the root is taken
// only when it is a real directory of this user with mode 0700.

let shared: string;
let attacker: string;
const open: ScratchDirs[] = [];
const scratchIn = (dir: string) => {
  const dirs = createScratchDirs({ dir });
  open.push(dirs);
  return dirs;
};
/** The path an earlier version used for the session: an unkeyed hash in the shared directory. */
const predicted = (tenant: string, sessionId: string) =>
  join(shared, `dispatch-${createHash('sha256').update(`${tenant}\u0000${sessionId}`).digest('hex').slice(0, 32)}`);
const mode = (path: string) => lstatSync(path).mode & 0o777;

beforeEach(() => {
  shared = mkdtempSync(join(tmpdir(), 'scratch-shared-'));
  chmodSync(shared, 0o1777);
  attacker = mkdtempSync(join(tmpdir(), 'scratch-attacker-'));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((dirs) => dirs.close()));
  rmSync(shared, { recursive: true, force: true });
  rmSync(attacker, { recursive: true, force: true });
});

test("a session's directory is a real 0700 directory in a 0700 root of this process's own", async () => {
  const dir = await scratchIn(shared).get('acme', 'demo');
  const root = dirname(dir);
  expect(dirname(root)).toBe(shared);
  expect(basename(root)).toMatch(/^dispatch-scratch-[A-Za-z0-9]{6}$/);
  for (const path of [root, dir]) {
    expect(lstatSync(path).isDirectory()).toBe(true);
    expect(mode(path)).toBe(0o700);
    expect(lstatSync(path).uid).toBe(process.getuid!());
  }
  expect(await scratchIn(shared).get('acme', 'demo')).not.toBe(dir);
});

test('a symbolic link planted at the predicted path is not followed, nor removed into', async () => {
  symlinkSync(attacker, predicted('acme', 'demo'));
  writeFileSync(join(attacker, 'theirs.txt'), 'kept');
  const dirs = scratchIn(shared);
  const dir = await dirs.get('acme', 'demo');
  writeFileSync(join(dir, 'report.csv'), 'tenant data');
  expect(lstatSync(dir).isSymbolicLink()).toBe(false);
  expect(readdirSync(attacker)).toEqual(['theirs.txt']);
  await dirs.remove('acme', 'demo');
  expect(readdirSync(attacker)).toEqual(['theirs.txt']);
});

test('a world-writable directory created at the predicted path is not used', async () => {
  mkdirSync(predicted('acme', 's2'));
  chmodSync(predicted('acme', 's2'), 0o777);
  const dir = await scratchIn(shared).get('acme', 's2');
  expect(dir).not.toBe(predicted('acme', 's2'));
  expect(mode(dir)).toBe(0o700);
});

test('a link or a wider mode found in the root is refused, not used', async () => {
  const dirs = scratchIn(shared);
  const dir = await dirs.get('acme', 'link');
  rmSync(dir, { recursive: true });
  symlinkSync(attacker, dir);
  // The message names the path under the scratch root, not where the root is (it reaches the model).
  await expect(dirs.get('acme', 'link')).rejects.toThrow(`scratch directory ${dir.replace(`${shared}/`, '<scratch root>/')} is not a directory of this user with mode 0700 (a symbolic link, another owner or a wider mode): not used`);
  expect(readdirSync(attacker)).toEqual([]);
  const wide = await dirs.get('acme', 'wide');
  chmodSync(wide, 0o777);
  await expect(dirs.get('acme', 'wide')).rejects.toThrow(/is not a directory of this user with mode 0700/);
});

test('a directory removed under a session is made again on its next use', async () => {
  const dirs = scratchIn(shared);
  const dir = await dirs.get('acme', 'demo');
  rmSync(dirname(dir), { recursive: true });
  const again = await dirs.get('acme', 'demo');
  expect(statSync(again).isDirectory()).toBe(true);
  expect(mode(dirname(again))).toBe(0o700);
});

test('close removes the root and everything in it; get is refused after', async () => {
  const dirs = scratchIn(shared);
  const dir = await dirs.get('acme', 'demo');
  writeFileSync(join(dir, 'work.txt'), 'data');
  await dirs.get('acme', 'other');
  await dirs.close();
  expect(readdirSync(shared)).toEqual([]);
  await expect(dirs.get('acme', 'demo')).rejects.toThrow('the scratch directories are closed');
  await dirs.close();
});

// Giving a directory to another user takes root; elsewhere the owner check is not exercised.
(process.getuid?.() === 0 ? test : test.skip)("another user's directory is refused in the root, and another user's old root is not swept", async () => {
  const dirs = scratchIn(shared);
  const dir = await dirs.get('acme', 'owned');
  chownSync(dir, 65534, 65534);
  await expect(dirs.get('acme', 'owned')).rejects.toThrow(/is not a directory of this user with mode 0700/);
  const theirs = join(shared, 'dispatch-scratch-0ther0');
  mkdirSync(theirs, { mode: 0o700 });
  chownSync(theirs, 65534, 65534);
  // Two days on, it would be left behind were it this user's.
  expect(await removeStaleRoots(shared, dirname(dir), Date.now() + 2 * 86_400_000, 10)).toBe(0);
  expect(statSync(theirs).isDirectory()).toBe(true);
});
