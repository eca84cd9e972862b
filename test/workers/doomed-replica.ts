import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';

/** A dispatchd process on `redisUrl` with no tools of its own, for a test to kill (SIGKILL). */
export interface DoomedReplica extends Daemon {
  /** Kills it if it still runs and removes its config directory. */
  close(): void;
}

/** Starts the compiled dispatchd on `redisUrl` with an empty config file. */
export async function startDoomedReplica(redisUrl: string): Promise<DoomedReplica> {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-doomed-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(config, 'tools: []\n');
  const daemon = await startDaemon(['--redis', redisUrl, '--config', config]).catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  return {
    ...daemon,
    close() {
      if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
