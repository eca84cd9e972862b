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
  /**
   * The session's directory, created if needed; rejects after close, and when the session is
   * removed while this get runs (its directory then goes once made).
   */
  get(tenant: string, sessionId: string): Promise<string>;
  /**
   * Removes the session's directory, if any, also one a get running now is making; never throws.
   * Resolves once it is gone.
   */
  remove(tenant: string, sessionId: string): Promise<void>;
  /** Removes expired sessions' directories and roots left behind; also run on a timer. */
  sweep(): Promise<void>;
  /** Stops the sweeps and removes the root with every directory in it; never throws. */
  close(): Promise<void>;
}

/** A get() running: marked ended by a removal of its session, which waits for it to settle. */
interface Getting {
  ended: boolean;
  readonly settled: Promise<void>;
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
  /** The gets running per session: a removal meanwhile marks them ended and waits for them. */
  const getting = new Map<string, Set<Getting>>();
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

  /**
   * Removes a session's directory once; a removal asked while one runs waits for that one, and one
   * asked while gets run marks them ended and removes the directory once they settle.
   */
  function removeKey(key: string): Promise<void> {
    const running = removals.get(key);
    const gets = getting.get(key);
    getting.delete(key);
    for (const get of gets ?? []) get.ended = true;
    if (!lastUse.delete(key) && gets === undefined) return running ?? Promise.resolve();
    const waits = [running, ...[...(gets ?? [])].map((get) => get.settled)];
    let path: string | undefined;
    const removal: Promise<void> = Promise.all(waits)
      .then(() => {
        // Read now: the root is made by the first get, and made again if a temp cleaner removed it.
        path = rootPath === undefined ? undefined : join(rootPath, nameOf(key));
        return path === undefined ? undefined : rm(path, { recursive: true, force: true });
      })
      .catch((error: Error) => logger?.warn('could not remove a scratch directory', { path, error: error.message }))
      .finally(() => {
        if (removals.get(key) === removal) removals.delete(key);
      });
    removals.set(key, removal);
    return removal;
  }

  /** Expiry and the maxDirs bound pass over a session a get is using now. */
  const idle = (key: string) => !getting.has(key);

  function used(key: string): void {
    lastUse.delete(key);
    lastUse.set(key, Date.now());
    if (lastUse.size <= maxDirs) return;
    for (const oldest of lastUse.keys()) {
      if (idle(oldest)) return void removeKey(oldest);
    }
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
      if (idle(key)) expired.push(key);
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
      let settle!: () => void;
      const get: Getting = { ended: false, settled: new Promise<void>((resolve) => (settle = resolve)) };
      const gets = getting.get(key) ?? new Set<Getting>();
      getting.set(key, gets.add(get));
      try {
        await removals.get(key);
        const dir = await make(key);
        if (get.ended) throw new Error('the session ended while its scratch directory was being made');
        used(key);
        return dir;
      } finally {
        gets.delete(get);
        if (gets.size === 0 && getting.get(key) === gets) getting.delete(key);
        settle();
      }
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
