import { readFileSync } from 'node:fs';
import { suggestKey } from '../config/unknown-key';

/**
 * A command line dispatchctl cannot act on: exit 2, the message and a line pointing to --help
 * unless `pointToHelp` is false (a refusal the help would not explain: the token, the address).
 * The whole help after the message buried it, some 50 lines up.
 */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly pointToHelp = true,
  ) {
    super(message);
  }
}

/**
 * A file dispatchctl was given that it cannot use (a turn file that is no JSON, holds an unknown
 * key or a bad value): exit 1, as for a file it cannot read, with the message alone. The command
 * line was right; the usage text says nothing about the file's content.
 */
export class FileError extends Error {}

/** A one-line cause for a failed read, plain for the usual file-system errors (a turn file's, a tools file's, parse's input). */
export function readProblem(error: unknown): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return error instanceof Error ? error.message : String(error);
}

/** The text of `file` (`-`: standard input); one that cannot be read is refused naming it, plainly. */
export function readText(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new FileError(`cannot read ${file === '-' ? 'standard input' : file}: ${readProblem(error)}`);
  }
}

/** The line after a usage error's message. */
export const HELP_HINT = "run 'dispatchctl --help' for usage";

/** `a`, `a or b`, `a, b or c`. */
export const orList = (words: readonly string[]): string => (words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`);

/**
 * The UsageError of a subcommand `group` does not have (`tools lst`): it names the group and the
 * subcommand, the one likely meant (as a config file's misspelt key is told) and those it has.
 */
export function unknownSubcommand(group: string, sub: string, known: readonly string[]): UsageError {
  const meant = suggestKey(sub, known);
  return new UsageError(`unknown ${group} subcommand ${JSON.stringify(sub)} (${meant === undefined ? '' : `did you mean ${meant}? `}${group} takes ${orList(known)})`);
}

/** The largest value of a proto uint32 field. */
export const MAX_UINT32 = 4_294_967_295;

/**
 * A uint32 argument (an offset, a turn number) from the command line or a file: a whole number
 * from 0 to MAX_UINT32, written in decimal digits when it is text. Throws a UsageError naming `what`.
 */
export function uint32Argument(value: unknown, what: string): number {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 0 || number > MAX_UINT32) {
    throw new UsageError(`${what} must be a whole number from 0 to ${MAX_UINT32}, got ${JSON.stringify(value) ?? String(value)}`);
  }
  return number;
}
