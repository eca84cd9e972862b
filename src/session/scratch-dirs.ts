import { randomBytes } from 'node:crypto';
import { lstat, rm, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { shortHash } from '../json';
import { localSessionKey } from '../store';
import { makePrivateDir, makePrivateRoot } from './private-dirs';
import { forgetRealRoot, hideScratchRoot, noteRealRoot } from './scratch-paths';
import { resolveScratchDirsOptions, type ScratchDirsOptions } from './scratch-options';
import { removeStaleRoots, writeOwnerFile } from './stale-roots';

/** A session's directory held by a running call: expiry and the maxDirs bound leave it until released. */
export interface ScratchHold {
  readonly path: string;
  /** Ends the hold (a second call does nothing); counts as a use of the directory. */
  release(): void;
}

/**
 * Per-session scratch directories: created on first use in a root private to this process, removed
 * when the session ends, after a time without use, or when more sessions need one (least recently
 * used first, never one a call holds), and all of them with the root on close.
 */
export interface ScratchDirs {
  /**
   * The session's directory, created if needed; rejects after close, when the session is removed
   * while this get runs (its directory then goes once made), and when making it would pass maxDirs
   * while calls hold every directory there is.
   */
  get(tenant: string, sessionId: string): Promise<string>;
  /** As {@link get}, and holds the directory until released (a built-in's, while it runs). */
  hold(tenant: string, sessionId: string): Promise<ScratchHold>;
  /**
   * Removes the session's directory, if any, also one a get running now is making or a call
   * holds (whose writes then fail: the session's next get makes a new, empty one); never throws.
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
 * A session's directory from its first use on this process until its removal: a name of its own
 * (the session's hash and random characters), so a call still holding the path of a session that
 * ended writes into a removed directory, never into the session's next one.
 */
interface Incarnation {
  readonly name: string;
  holds: number;
}

/**
 * Creates scratch directories in a root made with mkdtemp (mode 0700) under `options.dir`. The
 * first sweep runs now (it removes roots that processes which did not close left behind), then one
 * every `sweepIntervalMs` on a timer that does not keep the process alive, which also touches the
 * root: the heartbeat its owner file announces to other processes' sweeps.
 */
export function createScratchDirs(options: ScratchDirsOptions = {}): ScratchDirs {
  const { dir: base, ttlMs, maxDirs, sweepIntervalMs, maxRemovalsPerSweep, logger } = resolveScratchDirsOptions(options);
  /** Epoch ms of each made directory's last use, least recently used first. */
  const lastUse = new Map<string, number>();
  /** Each session's directory now: chosen by its first get, forgotten at its removal. */
  const current = new Map<string, Incarnation>();
  /** Sessions whose first directory a get is making: they count against maxDirs already. */
  const making = new Set<string>();
  const removals = new Map<string, Promise<void>>();
  /** The gets running per session: a removal meanwhile marks them ended and waits for them. */
  const getting = new Map<string, Set<Getting>>();
  let root: Promise<string> | undefined;
  let rootPath: string | undefined;
  let closed = false;
  let sweeping: Promise<void> | undefined;

  const keyOf = (tenant: string, sessionId: string) => localSessionKey({ tenant, sessionId });

  function incarnationOf(key: string): Incarnation {
    let incarnation = current.get(key);
    if (incarnation === undefined) {
      incarnation = { name: `${shortHash(key)}-${randomBytes(8).toString('hex')}`, holds: 0 };
      current.set(key, incarnation);
    }
    return incarnation;
  }

  function rootDir(): Promise<string> {
    if (closed) return Promise.reject(new Error('the scratch directories are closed'));
    root ??= makePrivateRoot(base).then(
      async (path) => {
        await writeOwnerFile(path, sweepIntervalMs, logger);
        noteRealRoot(path);
        return (rootPath = path);
      },
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
    const incarnation = current.get(key);
    current.delete(key);
    if ((!lastUse.delete(key) && gets === undefined) || incarnation === undefined) return running ?? Promise.resolve();
    const waits = [running, ...[...(gets ?? [])].map((get) => get.settled)];
    let path: string | undefined;
    const removal: Promise<void> = Promise.all(waits)
      .then(() => {
        // Read now: the root is made by the first get, and made again if a temp cleaner removed it.
        path = rootPath === undefined ? undefined : join(rootPath, incarnation.name);
        return path === undefined ? undefined : rm(path, { recursive: true, force: true });
      })
      .catch((error: Error) => logger?.warn('could not remove a scratch directory', { path, error: error.message }))
      .finally(() => {
        if (removals.get(key) === removal) removals.delete(key);
      });
    removals.set(key, removal);
    return removal;
  }

  /** Expiry and the maxDirs bound pass over a session a get is using or a call holds. */
  const idle = (key: string) => !getting.has(key) && (current.get(key)?.holds ?? 0) === 0;

  /** Removes the least recently used idle directory; false when every one is busy. */
  function evictOne(): boolean {
    for (const oldest of lastUse.keys()) {
      if (!idle(oldest)) continue;
      void removeKey(oldest);
      return true;
    }
    return false;
  }

  /** Makes room for a session's first directory within maxDirs, or refuses it; counts it as making. */
  function reserve(key: string): boolean {
    if (lastUse.has(key) || making.has(key)) return false;
    while (lastUse.size + making.size >= maxDirs) {
      if (!evictOne()) {
        throw new Error(`no scratch directory for this session: all ${maxDirs} of this process (maxDirs) are in use by calls running now; try again once one ends`);
      }
    }
    making.add(key);
    return true;
  }

  function used(key: string): void {
    lastUse.delete(key);
    lastUse.set(key, Date.now());
    // Past the bound only when two gets made one session's first directory and the first failed.
    if (lastUse.size > maxDirs) evictOne();
  }

  /**
   * Makes the session's directory. A failure is logged with its paths and rejects with them
   * written relative to `<scratch root>` (options.dir): the message reaches the model, as a
   * built-in's crash.
   */
  function make(name: string): Promise<string> {
    return makeIn(name).catch((error: Error) => {
      logger?.warn('could not make a scratch directory', { error: error.message });
      throw new Error(hideScratchRoot(error.message, base), { cause: error });
    });
  }

  async function makeIn(name: string): Promise<string> {
    const parent = await rootDir();
    try {
      return await makePrivateDir(join(parent, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // The root itself may have been removed (a temp cleaner): then make another, once.
      const gone = await lstat(parent).then(() => false, () => true);
      if (gone && rootPath === parent) {
        forgetRealRoot(parent);
        [root, rootPath] = [undefined, undefined];
      }
      return makePrivateDir(join(await rootDir(), name));
    }
  }

  /** The session's directory; with `holding`, held before any other code can evict it. */
  async function open(key: string, holding: boolean): Promise<{ path: string; incarnation: Incarnation }> {
    let settle!: () => void;
    const get: Getting = { ended: false, settled: new Promise<void>((resolve) => (settle = resolve)) };
    const gets = getting.get(key) ?? new Set<Getting>();
    getting.set(key, gets.add(get));
    const incarnation = incarnationOf(key);
    let reserved = false;
    try {
      await removals.get(key);
      reserved = reserve(key);
      const path = await make(incarnation.name);
      if (get.ended) throw new Error('the session ended while its scratch directory was being made');
      if (reserved) making.delete(key);
      reserved = false;
      if (holding) incarnation.holds++;
      used(key);
      return { path, incarnation };
    } finally {
      if (reserved) making.delete(key);
      gets.delete(get);
      if (gets.size === 0 && getting.get(key) === gets) {
        getting.delete(key);
        // A first get that failed leaves no directory to remember.
        if (!lastUse.has(key) && current.get(key) === incarnation && incarnation.holds === 0) current.delete(key);
      }
      settle();
    }
  }

  async function sweepOnce(): Promise<void> {
    const now = Date.now();
    const expired: string[] = [];
    for (const [key, at] of lastUse) {
      if (at > now - ttlMs || expired.length >= maxRemovalsPerSweep) break;
      if (idle(key)) expired.push(key);
    }
    await Promise.all(expired.map(removeKey));
    await removeStaleRoots(base, rootPath, now, maxRemovalsPerSweep - expired.length, logger);
  }

  function sweep(): Promise<void> {
    sweeping ??= sweepOnce()
      .catch((error: Error) => logger?.warn('a scratch directory sweep failed', { error: error.message }))
      .finally(() => (sweeping = undefined));
    return sweeping;
  }

  /** Marks the root alive for other processes' sweeps, even while a long sweep of this one runs. */
  function heartbeat(): void {
    const now = Date.now() / 1000;
    if (rootPath !== undefined) void utimes(rootPath, now, now).catch(() => undefined);
  }

  const timer = setInterval(() => {
    heartbeat();
    void sweep();
  }, sweepIntervalMs);
  timer.unref();
  void sweep();

  return {
    get: async (tenant, sessionId) => (await open(keyOf(tenant, sessionId), false)).path,
    async hold(tenant, sessionId) {
      const key = keyOf(tenant, sessionId);
      const { path, incarnation } = await open(key, true);
      let held = true;
      return {
        path,
        release() {
          if (!held) return;
          held = false;
          incarnation.holds--;
          if (current.get(key) === incarnation && lastUse.has(key)) used(key);
        },
      };
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
      current.clear();
      const path = await root?.catch(() => undefined);
      if (path === undefined) return;
      forgetRealRoot(path);
      await rm(path, { recursive: true, force: true }).catch((error: Error) => logger?.warn('could not remove the scratch root', { path, error: error.message }));
    },
  };
}
