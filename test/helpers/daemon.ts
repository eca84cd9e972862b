import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** A dispatchd child process. */
export interface Daemon {
  readonly child: ChildProcess;
  readonly port: number;
  readonly stderr: () => string;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/**
 * Runs the compiled `bin/dispatchd.js` (`npm test` builds dist/ first). Resolves once it serves,
 * with the port it bound; rejects with its stderr if it exits first or takes over 15 s.
 */
export function startDaemon(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Daemon> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'dispatchd.js'), '--listen', '127.0.0.1:0', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`dispatchd did not start in 15 s: ${stderr}`));
    }, 15_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const port = /"message":"dispatchd serving".*?"port":(\d+)/.exec(stderr)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve({ child, port: Number(port), stderr: () => stderr, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`dispatchd exited with ${code}: ${stderr}`));
    });
  });
}

/** Runs dispatchd expecting it to exit; resolves with its code and stderr. */
export function runDaemon(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'dispatchd.js'), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
