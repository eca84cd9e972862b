import type * as CommandsModule from './dispatchctl-commands';
import { parseCommandLine, USAGE } from './dispatchctl-usage';

export { RESULT_ERROR } from './dispatchctl-usage';

/** Where dispatchctl writes a line. */
export type Out = (line: string) => void;

/** Runs one dispatchctl command; resolves with the exit code (non-zero on a hard error). */
export async function main(argv: readonly string[], out: Out = (l) => process.stdout.write(`${l}\n`), err: Out = (l) => process.stderr.write(`${l}\n`)): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    err(`dispatchctl: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  if (values.help || !command) {
    out(USAGE);
    return values.help ? 0 : 2;
  }
  // Only now, a command to run: the commands load gRPC and the clients, which --help and a bad flag
  // do without. require, not import(): TypeScript keeps import() as an ES import in CommonJS output.
  const { runCommand } = require('./dispatchctl-commands') as typeof CommandsModule;
  return runCommand(command, args, values, out, err);
}
