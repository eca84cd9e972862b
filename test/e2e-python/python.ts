import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

/** Debian's interpreter, with python3-grpcio and python3-grpc-tools. */
export const PYTHON = '/usr/bin/python3';
export const EXAMPLES = path.join(__dirname, '../../examples/python');

const hasGrpc = spawnSync(PYTHON, ['-c', 'import grpc, grpc_tools'], { stdio: 'ignore' }).status === 0;
if (!hasGrpc) {
  // CI installs the packages, so there a missing module is a broken CI step, not a skip.
  if (process.env.DISPATCH_CI === '1') throw new Error('/usr/bin/python3 lacks grpc in CI; .ci/run must install python3-grpcio python3-grpc-tools');
  process.stderr.write('test/e2e-python skipped: /usr/bin/python3 lacks grpc; install python3-grpcio python3-grpc-tools (CI does)\n');
}
export const describeWithPython = hasGrpc ? describe : describe.skip;

/** A Python example running as a child process. */
export interface RunningPython {
  readonly child: ChildProcess;
  /** Its stdout and stderr so far, interleaved. */
  readonly out: () => string;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
}

/** Runs `script` from examples/python as spawnPython does. */
export const runPython = (script: string, args: readonly string[], env: NodeJS.ProcessEnv, prefix: readonly string[] = []): RunningPython =>
  spawnPython([path.join(EXAMPLES, script), ...args], env, prefix);

/**
 * Runs Python with `argv` in examples/python, with `env` over this process's environment less the
 * variables the examples read to connect (a developer's DISPATCH_TOKEN must not change a test);
 * `prefix` runs it behind another command (e.g. `unshare -n`).
 */
export function spawnPython(argv: readonly string[], env: NodeJS.ProcessEnv, prefix: readonly string[] = []): RunningPython {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(DISPATCH_(ADDRESS|TOKEN|TLS|ALLOW_PLAINTEXT_TOKEN|KEEPALIVE)|GRPC_DEFAULT_SSL_ROOTS_FILE_PATH$)/.test(name)));
  const command = [...prefix, PYTHON, ...argv];
  const child = spawn(command[0]!, command.slice(1), { cwd: EXAMPLES, env: { ...inherited, ...env, PYTHONUNBUFFERED: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  // 'close', not 'exit': the output is whole by then.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, out: () => out, exited };
}

/** The exit code and output of `run` once it exits; killed after `ms` (the code is then null). */
export async function finished(run: RunningPython, ms = 20_000): Promise<{ code: number | null; out: string }> {
  const timer = setTimeout(() => run.child.kill('SIGKILL'), ms);
  const code = await run.exited;
  clearTimeout(timer);
  return { code, out: run.out() };
}
