import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log';
import { isPrivateDir, SCRATCH_ROOT_PATTERN } from './private-dirs';

/**
 * Removes at most `budget` scratch roots in `dir` that processes which did not close (a crash, a
 * kill) left behind: private directories of this user named like a root, other than `own`, and
 * last changed before `changedBefore` (epoch ms). A live process touches its root at every sweep,
 * so its root is never that old. Returns how many were removed.
 */
export async function removeStaleRoots(dir: string, own: string | undefined, changedBefore: number, budget: number, logger?: Logger): Promise<number> {
  if (budget <= 0) return 0;
  const names = await readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    if (removed >= budget) break;
    if (!SCRATCH_ROOT_PATTERN.test(name)) continue;
    const path = join(dir, name);
    if (path === own) continue;
    const stats = await lstat(path).catch(() => undefined);
    if (!stats || !isPrivateDir(stats) || stats.mtimeMs >= changedBefore) continue;
    await rm(path, { recursive: true, force: true }).then(
      () => void removed++,
      (error: Error) => logger?.warn('could not remove a scratch root left behind', { path, error: error.message }),
    );
  }
  return removed;
}
