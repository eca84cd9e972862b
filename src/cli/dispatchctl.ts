import type * as CommandsModule from './dispatchctl-commands';
import { checkCommand, parseCommandLine, USAGE } from './dispatchctl-usage';

export { RESULT_ERROR } from './dispatchctl-usage';

/** Where dispatchctl writes a line. */
export type Out = (line: string) => void;

/** Runs one dispatchctl command; resolves with the exit code (non-zero on a hard error). */
export async function main(argv: readonly string[], out: Out = (l) => process.stdout.write(`${l}\n`), err: Out = (l) => process.stderr.write(`${l}\n`)): Promise<number> {
  let parsed;
  let name: string | undefined;
  try {
    parsed = parseCommandLine(argv);
    const [command, ...args] = parsed.positionals;
    if (!parsed.values.help && command) name = checkCommand(command, args, parsed.values);
  } catch (error) {
    err(`dispatchctl: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help || name === undefined) {
    out(USAGE);
    return values.help ? 0 : 2;
  }
  // Only now, a command that can run: the commands load gRPC and the clients, which --help and a
  // bad command line do without. require, not import(): TypeScript keeps import() as an ES import
  // in CommonJS output.
  const { runCommand } = require('./dispatchctl-commands') as typeof CommandsModule;
  return runCommand(name, positionals.slice(1), values, out, err);
}
