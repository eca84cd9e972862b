import type { Logger } from '../log';

/**
 * What kept dispatchd from starting, the `code` of its one log line: stable names for alerts and
 * log queries, where the message's text may be reworded.
 */
export type StartupFailureCode =
  /** A command line dispatchd cannot parse (an unknown flag, a flag without its value): exit 2. */
  | 'invalid_flag'
  /** A flag or variable with a bad value (`setting` names it): exit 2. */
  | 'invalid_setting'
  /** A Redis URL that does not parse, from a flag, a variable (exit 2) or the config file (exit 1). */
  | 'invalid_redis_url'
  /** An address beyond loopback without authentication: exit 2. */
  | 'insecure_listen'
  /** The config file (or a tokens file) cannot be read or is refused (`file`, `path`, `line`): exit 1. */
  | 'invalid_config'
  /** A port that cannot be bound (`setting`, `address`): exit 1. */
  | 'listen_failed'
  /** A TLS certificate, key or CA file that cannot be read or used: exit 1. */
  | 'tls_files'
  /** Redis refused dispatch's configuration (a password, the database, the ACL): exit 1. */
  | 'redis_refused'
  /** Anything else that failed while the app was built: exit 1. */
  | 'start_failed';

/** A flag or environment variable dispatchd refuses; `setting` is the one that gave the value (`--grace`, `DISPATCH_GRACE_MS`). */
export class SettingError extends Error {
  constructor(
    readonly setting: string,
    message: string,
    readonly code: Extract<StartupFailureCode, 'invalid_setting' | 'invalid_redis_url'> = 'invalid_setting',
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Runs `work`; what it throws is thrown again as a SettingError of `setting`, the flag or variable that gave the value. */
export function refusedAs<T>(setting: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw new SettingError(setting, errorText(error));
  }
}

/** Why dispatchd cannot start: its code, the text a person reads, and fields naming what failed. */
export interface StartupProblem {
  readonly code: StartupFailureCode;
  /** The text dispatchd printed before it logged JSON, without its `dispatchd: ` prefix. */
  readonly text: string;
  /** The error's own text (its message; `text` adds where it came from). */
  readonly error: string;
  readonly fields?: Readonly<Record<string, unknown>>;
}

/**
 * Logs why dispatchd cannot start as one line at error level, in the shape of every other line
 * (a log pipeline parses each as JSON): `message` is the text it printed before (`dispatchd: bad
 * config: ...`, so a search for that text still finds it), `code` names what failed, `error` is the
 * error's own text, `exitCode` the status it exits with. Returns `exitCode`.
 */
export function startupFailed(logger: Logger, exitCode: number, problem: StartupProblem): number {
  logger.error(`dispatchd: ${problem.text}`, { code: problem.code, error: problem.error, ...problem.fields, exitCode });
  return exitCode;
}

/** The text of anything thrown. */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The flag a Node parseArgs error names (`Unknown option '--bogus'`, `Option '--listen <value>' argument missing`). */
const PARSE_ARGS_FLAG = /'(-{1,2}[\w-]+)/;

/** Why the command line or the environment was refused: exit 2 (a usage error). */
export function usageProblem(error: unknown): StartupProblem {
  const text = errorText(error);
  if (error instanceof SettingError) return { code: error.code, text, error: errorText(error.cause ?? error), fields: { setting: error.setting } };
  const flag = PARSE_ARGS_FLAG.exec(text)?.[1];
  return { code: 'invalid_flag', text, error: text, fields: flag === undefined ? {} : { setting: flag } };
}
