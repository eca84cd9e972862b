import { lstat, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log';
import { MAX_TIMER_MS } from '../options/limits';
import { isPrivateDir, SCRATCH_ROOT_PATTERN } from './private-dirs';

/**
 * The file in a root that names how often its owner marks the root alive (touches its mtime):
 * `{"heartbeatMs": N}`. Its leading dot keeps it apart from the sessions' directories (hex names).
 */
export const OWNER_FILE = '.owner';

/** A root stays another's for this long past two of its owner's heartbeats (a stall, a slow disk). */
export const HEARTBEAT_GRACE_MS = 60_000;

/**
 * How long a root without a readable owner file (made by an earlier version, or its file could not
 * be written) stays unchanged before it is taken as left behind: the earlier versions' rule on
 * their defaults, 24 h and two sweeps of 10 min.
 */
export const UNKNOWN_OWNER_STALE_MS = 24 * 60 * 60 * 1000 + 2 * 10 * 60 * 1000;

const OWNER_FILE_MAX_BYTES = 256;

/** Writes the owner file into the root this process just made; returns false (and logs) when it could not. */
export async function writeOwnerFile(root: string, heartbeatMs: number, logger?: Logger): Promise<boolean> {
  return writeFile(join(root, OWNER_FILE), JSON.stringify({ heartbeatMs }), { mode: 0o600, flag: 'wx' }).then(
    () => true,
    (error: Error) => {
      logger?.warn('could not write the scratch root owner file: another process may take the root as left behind after 24 h 20 min unchanged', { path: root, error: error.message });
      return false;
    },
  );
}

/** The heartbeat interval the root's owner recorded, if the root has a sound owner file. */
async function ownerHeartbeatMs(root: string): Promise<number | undefined> {
  const path = join(root, OWNER_FILE);
  const stats = await lstat(path).catch(() => undefined);
  if (!stats?.isFile() || stats.size > OWNER_FILE_MAX_BYTES) return undefined;
  try {
    const { heartbeatMs } = JSON.parse(await readFile(path, 'utf8')) as { heartbeatMs?: unknown };
    return typeof heartbeatMs === 'number' && Number.isInteger(heartbeatMs) && heartbeatMs >= 1 && heartbeatMs <= MAX_TIMER_MS ? heartbeatMs : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How long `root` may go unchanged before it is taken as left behind: two of its owner's own
 * heartbeats and {@link HEARTBEAT_GRACE_MS}, whatever the settings of the process judging it.
 */
export async function staleAfterMs(root: string): Promise<number> {
  const heartbeatMs = await ownerHeartbeatMs(root);
  return heartbeatMs === undefined ? UNKNOWN_OWNER_STALE_MS : 2 * heartbeatMs + HEARTBEAT_GRACE_MS;
}

/**
 * Removes at most `budget` scratch roots in `dir` that processes which did not close (a crash, a
 * kill) left behind: private directories of this user named like a root, other than `own`, whose
 * owner stopped marking them alive. A live owner touches its root every heartbeat it recorded in
 * the root's {@link OWNER_FILE}, so a root is left behind once unchanged for two of those and
 * {@link HEARTBEAT_GRACE_MS} (`now` is epoch ms). Returns how many were removed.
 */
export async function removeStaleRoots(dir: string, own: string | undefined, now: number, budget: number, logger?: Logger): Promise<number> {
  if (budget <= 0) return 0;
  const names = await readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    if (removed >= budget) break;
    if (!SCRATCH_ROOT_PATTERN.test(name)) continue;
    const path = join(dir, name);
    if (path === own) continue;
    const stats = await lstat(path).catch(() => undefined);
    if (!stats || !isPrivateDir(stats) || stats.mtimeMs >= now - (await staleAfterMs(path))) continue;
    await rm(path, { recursive: true, force: true }).then(
      () => void removed++,
      (error: Error) => logger?.warn('could not remove a scratch root left behind', { path, error: error.message }),
    );
  }
  return removed;
}
