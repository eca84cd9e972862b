import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startDaemon } from '../../helpers/daemon';

const ROOT = resolve(__dirname, '../../..');
const BIN_TARGET = join(ROOT, 'dist/src/cli/dispatchd.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Makes sure dist/ is built from the current sources: `npm test` builds it first, so this only
 * builds (`npm run build`) when dist/ is missing or older than src/, as in a lone `npx jest` run.
 */
export function ensureDist(): void {
  let built = 0;
  try {
    built = statSync(BIN_TARGET).mtimeMs;
  } catch {
    built = 0;
  }
  if (built >= newestMtime(join(ROOT, 'src'))) return;
  spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'ignore', timeout: 120_000 });
  statSync(BIN_TARGET);
}

/** `node bin/dispatchd.js` in a child process, with its memory readable. */
export interface ChildServer {
  readonly pid: number;
  readonly address: string;
  /** Resident set size of the server process, in bytes (VmRSS from /proc). */
  rss(): number;
  alive(): boolean;
  stop(): Promise<void>;
}

/**
 * Starts dispatchd on 127.0.0.1:0 with `configYaml` as its config file (no auth, loopback);
 * `maxOldSpaceMb` caps its V8 heap (`--max-old-space-size`), so a leak ends in a crash.
 */
export async function startChildServer(configYaml: string, maxOldSpaceMb?: number): Promise<ChildServer> {
  const dir = mkdtempSync(join(tmpdir(), 'dispatchd-child-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(config, configYaml);
  const daemon = await startDaemon(['--config', config, '--grace', '1000'], {
    DISPATCH_AUTH_TOKENS_FILE: undefined,
    NODE_OPTIONS: maxOldSpaceMb === undefined ? process.env.NODE_OPTIONS : `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${maxOldSpaceMb}`.trim(),
  }).catch((error: Error) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  let exited = false;
  void daemon.exited.then(() => (exited = true));
  const pid = daemon.child.pid!;
  return {
    pid,
    address: `127.0.0.1:${daemon.port}`,
    alive: () => !exited,
    rss: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024,
    async stop() {
      if (!exited) {
        daemon.child.kill('SIGTERM');
        const timer = setTimeout(() => daemon.child.kill('SIGKILL'), 5000);
        await daemon.exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
