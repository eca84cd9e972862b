import type { Stats } from 'node:fs';
import { lstat, mkdir, mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';

/** The name of a process's scratch root: this prefix and mkdtemp's six random characters. */
export const SCRATCH_ROOT_PATTERN = /^dispatch-scratch-[A-Za-z0-9]{6}$/;
const ROOT_PREFIX = 'dispatch-scratch-';

/** True when `stats` (of lstat: a link is not followed) is a real directory of this user, mode 0700. */
export function isPrivateDir(stats: Stats): boolean {
  const uid = process.getuid?.();
  return stats.isDirectory() && (uid === undefined || stats.uid === uid) && (stats.mode & 0o777) === 0o700;
}

async function checkPrivate(path: string): Promise<string> {
  if (!isPrivateDir(await lstat(path))) {
    throw new Error(`scratch directory ${path} is not a directory of this user with mode 0700 (a symbolic link, another owner or a wider mode): not used`);
  }
  return path;
}

/** Makes a new root in `dir` that only this user may enter (mkdtemp: a fresh name, mode 0700). */
export async function makePrivateRoot(dir: string): Promise<string> {
  return checkPrivate(await mkdtemp(join(dir, ROOT_PREFIX)));
}

/**
 * Makes the directory `path` with mode 0700, or takes the one there if it is private: mkdir never
 * follows a symbolic link at `path`, and what is there is checked without following one.
 */
export async function makePrivateDir(path: string): Promise<string> {
  await mkdir(path, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return checkPrivate(path);
}
