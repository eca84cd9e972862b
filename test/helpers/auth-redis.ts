import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeRedisPort } from './redis-server';

/** A redis-server or Sentinel this test started with `requirepass`. */
export interface AuthRedis {
  readonly port: number;
  /** Runs redis-cli against it, authenticated, and returns stdout. */
  cli(...args: string[]): string;
  close(): Promise<void>;
}

/** What the server runs as: a plain server, or a Sentinel (quorum 1) of a master that needs a password. */
export type AuthRedisRole = { readonly kind: 'server' } | { readonly kind: 'sentinel'; readonly name: string; readonly masterPort: number; readonly masterPassword: string };

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

const cliOn = (port: number, password: string, args: readonly string[]) =>
  spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), '--no-auth-warning', '-a', password, ...args], { encoding: 'utf8', timeout: 5_000 });

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

/**
 * Starts a redis-server (or a Sentinel, `--sentinel`) on a free loopback port that requires
 * `password` (`requirepass`); a Sentinel also gets `sentinel auth-pass` for its master. Resolves
 * once the process this call spawned answers INFO with its own pid (another test's server on the
 * same port does not count), trying other ports when it exits at start.
 */
export async function startAuthRedis(password: string, role: AuthRedisRole = { kind: 'server' }): Promise<AuthRedis> {
  const dir = mkdtempSync(join(tmpdir(), `dispatch-auth-${role.kind}-`));
  for (let attempt = 1; attempt <= 5; attempt++) {
    const port = await freeRedisPort();
    const lines = [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `requirepass ${password}`];
    if (role.kind === 'sentinel') {
      lines.push(`sentinel monitor ${role.name} 127.0.0.1 ${role.masterPort} 1`, `sentinel auth-pass ${role.name} ${role.masterPassword}`);
    } else {
      lines.push('save ""', 'appendonly no');
    }
    const conf = join(dir, `${role.kind}-${port}.conf`);
    writeFileSync(conf, `${lines.join('\n')}\n`);
    const child = spawn('redis-server', role.kind === 'sentinel' ? [conf, '--sentinel'] : [conf], { stdio: 'ignore' });
    running.add(child);
    child.once('exit', () => running.delete(child));
    const deadline = Date.now() + 10_000;
    while (child.exitCode === null && Date.now() < deadline) {
      if (new RegExp(`process_id:${child.pid}\\r?\\n`).test(cliOn(port, password, ['INFO', 'server']).stdout ?? '')) {
        return {
          port,
          cli: (...args) => cliOn(port, password, args).stdout,
          async close() {
            await stop(child);
            rmSync(dir, { recursive: true, force: true });
          },
        };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await stop(child);
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`redis-server (${role.kind}) with requirepass did not start in 5 attempts`);
}
