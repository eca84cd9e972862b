import { terminalText } from '../events/terminal-text';
import type * as CommandsModule from './dispatchctl-commands';
import { checkCommand, parseCommandLine, refuseEmptyFlags, USAGE } from './dispatchctl-usage';
import { packageVersion } from './package-version';
import { HELP_HINT } from './usage';

export { RESULT_ERROR } from './dispatchctl-usage';

/** Where dispatchctl writes a line. */
export type Out = (line: string) => void;

/**
 * Lines to `stream` (stdout, stderr) that stop once its reader has gone (`dispatchctl events |
 * head -1`: EPIPE), firing `gone` (events then ends as on Ctrl-C): unhandled, that error killed the
 * process with Node's stack trace and exit 1.
 */
function linesTo(stream: NodeJS.WriteStream, gone: AbortController): Out {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    gone.abort();
  });
  return (line) => {
    if (!gone.signal.aborted) stream.write(`${line}\n`);
  };
}

/**
 * Retitles the process without the value of --token when `argv` is its own command line: that is
 * what /proc/PID/cmdline, and `ps`, show every local user, for as long as dispatchctl runs (hours,
 * for `events`). Node writes the title over the command line's memory.
 */
function hideToken(argv: readonly string[]): void {
  const own = process.argv.slice(2);
  if (own.length !== argv.length || own.some((arg, i) => arg !== argv[i])) return;
  if (!argv.some((arg) => arg === '--token' || arg.startsWith('--token='))) return;
  const shown = argv.map((arg, i) => (arg.startsWith('--token=') ? '--token=***' : argv[i - 1] === '--token' ? '***' : arg));
  process.title = ['dispatchctl', ...shown].join(' ');
}

/**
 * Runs one dispatchctl command; resolves with the exit code (non-zero on a hard error). Lines go
 * to `out` and `err`, by default to stdout and stderr.
 */
export async function main(argv: readonly string[], out?: Out, err?: Out): Promise<number> {
  hideToken(argv);
  const stdoutGone = new AbortController();
  const print = out ?? linesTo(process.stdout, stdoutGone);
  const warn = err ?? linesTo(process.stderr, new AbortController());
  let parsed;
  let name: string | undefined;
  try {
    parsed = parseCommandLine(argv);
    const [command, ...args] = parsed.positionals;
    if (!parsed.values.help && !parsed.values.version) {
      refuseEmptyFlags(parsed.values);
      if (command) name = checkCommand(command, args, parsed.values);
    }
  } catch (error) {
    // Quotes the command line (an unknown command or flag), escaped as any text dispatchctl did not
    // write. The message and where the usage is, not the usage itself: 50 lines buried the message.
    warn(`dispatchctl: ${terminalText((error as Error).message, true)}\n${HELP_HINT}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    print(USAGE);
    return 0;
  }
  if (values.version) {
    print(`dispatchctl ${packageVersion()}`);
    return 0;
  }
  // No command at all: the usage, as for --help, but exit 2.
  if (name === undefined) {
    print(USAGE);
    return 2;
  }
  // Only now, a command that can run: the commands load gRPC and the clients, which --help and a
  // bad command line do without. require, not import(): TypeScript keeps import() as an ES import
  // in CommonJS output.
  const { runCommand } = require('./dispatchctl-commands') as typeof CommandsModule;
  return runCommand(name, positionals.slice(1), values, print, warn, stdoutGone.signal);
}
