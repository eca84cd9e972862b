import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shortHash } from '../json';

/** Per-session scratch directories: created on first use, removed when the session ends. */
export interface ScratchDirs {
  /** The session's directory, created if needed. */
  get(tenant: string, sessionId: string): Promise<string>;
  /** Removes the session's directory, if any; never throws. */
  remove(tenant: string, sessionId: string): Promise<void>;
}

/** Creates scratch directories under `root` (default: the OS temp dir). */
export function createScratchDirs(root: string = tmpdir()): ScratchDirs {
  const pathOf = (tenant: string, sessionId: string) =>
    join(root, `dispatch-${shortHash(`${tenant}\u0000${sessionId}`)}`);
  return {
    async get(tenant, sessionId) {
      const dir = pathOf(tenant, sessionId);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      return dir;
    },
    async remove(tenant, sessionId) {
      await rm(pathOf(tenant, sessionId), { recursive: true, force: true }).catch(() => undefined);
    },
  };
}
