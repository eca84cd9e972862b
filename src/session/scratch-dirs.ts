import { lstat, rm, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { shortHash } from '../json';
import { localSessionKey } from '../store';
import { makePrivateDir, makePrivateRoot } from './private-dirs';
import { resolveScratchDirsOptions, type ScratchDirsOptions } from './scratch-options';
import { removeStaleRoots } from './stale-roots';

/**
 * Per-session scratch directories: created on first use in a root private to this process, removed
 * when the session ends, after a time without use, or when more sessions need one (least recently
 * used first), and all of them with the root on close.
 */
export interface ScratchDirs {
  /** The session's directory, created if needed; rejects after close. */
  get(tenant: string, sessionId: string): Promise<string>;
  /** Removes the session's directory, if any; never throws. Resolves once it is gone. */
  remove(tenant: string, sessionId: string): Promise<void>;
  /** Removes expired sessions' directories and roots left behind; also run on a timer. */
  sweep(): Promise<void>;
  /** Stops the sweeps and removes the root with every directory in it; never throws. */
  close(): Promise<void>;
}

/**
 * Creates scratch directories in a root made with mkdtemp (mode 0700) under `options.dir`. The
 * first sweep runs now (it removes roots that processes which did not close left behind), then one
 * every `sweepIntervalMs` on a timer that does not keep the process alive.
 */
export function createScratchDirs(options: ScratchDirsOptions = {}): ScratchDirs {
  const { dir: base, ttlMs, maxDirs, sweepIntervalMs, maxRemovalsPerSweep, logger } = resolveScratchDirsOptions(options);
  /** Epoch ms of each session's last use, least recently used first. */
  const lastUse = new Map<string, number>();
  const removals = new Map<string, Promise<void>>();
  let root: Promise<string> | undefined;
  let rootPath: string | undefined;
  let closed = false;
  let sweeping: Promise<void> | undefined;

  const keyOf = (tenant: string, sessionId: string) => localSessionKey({ tenant, sessionId });
  const nameOf = (key: string) => shortHash(key);

  function rootDir(): Promise<string> {
    if (closed) return Promise.reject(new Error('the scratch directories are closed'));
    root ??= makePrivateRoot(base).then(
      (path) => (rootPath = path),
      (error: unknown) => {
        root = undefined;
        throw error;
      },
    );
    return root;
  }

  /** Removes a session's directory once; a removal asked while one runs waits for that one. */
  function removeKey(key: string): Promise<void> {
    const running = removals.get(key);
    if (!lastUse.delete(key) || rootPath === undefined) return running ?? Promise.resolve();
    const path = join(rootPath, nameOf(key));
    const removal: Promise<void> = (running ?? Promise.resolve())
      .then(() => rm(path, { recursive: true, force: true }))
      .catch((error: Error) => logger?.warn('could not remove a scratch directory', { path, error: error.message }))
      .finally(() => {
        if (removals.get(key) === removal) removals.delete(key);
      });
    removals.set(key, removal);
    return removal;
  }

  function used(key: string): void {
    lastUse.delete(key);
    lastUse.set(key, Date.now());
    if (lastUse.size > maxDirs) void removeKey(lastUse.keys().next().value as string);
  }

  async function make(key: string): Promise<string> {
    const parent = await rootDir();
    try {
      return await makePrivateDir(join(parent, nameOf(key)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // The root itself may have been removed (a temp cleaner): then make another, once.
      const gone = await lstat(parent).then(() => false, () => true);
      if (gone && rootPath === parent) [root, rootPath] = [undefined, undefined];
      return makePrivateDir(join(await rootDir(), nameOf(key)));
    }
  }

  async function sweepOnce(): Promise<void> {
    const now = Date.now();
    const expired: string[] = [];
    for (const [key, at] of lastUse) {
      if (at > now - ttlMs || expired.length >= maxRemovalsPerSweep) break;
      expired.push(key);
    }
    const removing = Promise.all(expired.map(removeKey));
    // Other processes' sweeps judge a root by its age: keep this one's fresh while it lives.
    if (rootPath !== undefined) await utimes(rootPath, now / 1000, now / 1000).catch(() => undefined);
    await removing;
    await removeStaleRoots(base, rootPath, now - ttlMs - 2 * sweepIntervalMs, maxRemovalsPerSweep - expired.length, logger);
  }

  function sweep(): Promise<void> {
    sweeping ??= sweepOnce()
      .catch((error: Error) => logger?.warn('a scratch directory sweep failed', { error: error.message }))
      .finally(() => (sweeping = undefined));
    return sweeping;
  }

  const timer = setInterval(() => void sweep(), sweepIntervalMs);
  timer.unref();
  void sweep();

  return {
    async get(tenant, sessionId) {
      const key = keyOf(tenant, sessionId);
      await removals.get(key);
      const dir = await make(key);
      used(key);
      return dir;
    },
    remove: (tenant, sessionId) => removeKey(keyOf(tenant, sessionId)),
    sweep,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await sweeping;
      await Promise.all(removals.values());
      lastUse.clear();
      const path = await root?.catch(() => undefined);
      if (path !== undefined) await rm(path, { recursive: true, force: true }).catch((error: Error) => logger?.warn('could not remove the scratch root', { path, error: error.message }));
    },
  };
}
