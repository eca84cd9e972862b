import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { main } from '../../src/cli/dispatchctl';

/** Runs dispatchctl in this process against `address`; resolves with its exit code, stdout and stderr. */
export function dispatchctlAt(address: () => string) {
  return async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['--address', address(), ...args], (l) => out.push(l), (l) => err.push(l));
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
}

/** What a dispatchctl process did. */
export interface DispatchctlRun {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** A dispatchctl child process. */
export interface RunningDispatchctl {
  readonly child: ChildProcess;
  /** Its stdout so far. */
  readonly out: () => string;
  readonly done: Promise<DispatchctlRun>;
}

/**
 * Starts the compiled `bin/dispatchctl.js` (`npm test` builds dist/ first) as a child process, with
 * `env` over this process's environment less the DISPATCH_* variables dispatchctl reads; `prefix`
 * runs it behind another command (e.g. `unshare -n`). Killed after 20 s.
 */
export function startDispatchctl(args: readonly string[], env: NodeJS.ProcessEnv = {}, prefix: readonly string[] = []): RunningDispatchctl {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^DISPATCH_(ADDRESS|TOKEN|TLS_)/.test(name)));
  const command = [...prefix, process.execPath, join(__dirname, '..', '..', 'bin', 'dispatchctl.js'), ...args];
  const child = spawn(command[0]!, command.slice(1), { env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const done = new Promise<DispatchctlRun>((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
  return { child, out: () => out, done };
}

/** Runs dispatchctl as startDispatchctl does; resolves once it exits. */
export const runDispatchctl = (args: readonly string[], env: NodeJS.ProcessEnv = {}, prefix: readonly string[] = []): Promise<DispatchctlRun> => startDispatchctl(args, env, prefix).done;
