/** Severity of a log line. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const RANK: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Structured logging: one JSON line per record on stderr. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * The level DISPATCH_LOG_LEVEL names, in any case (`DEBUG`); info when it is unset or empty.
 * Throws on any other value (dispatchd refuses to start with it).
 */
export function logLevelFromEnv(env: NodeJS.ProcessEnv): LogLevel {
  const value = env.DISPATCH_LOG_LEVEL;
  if (value === undefined || value === '') return 'info';
  const level = value.toLowerCase();
  if (Object.hasOwn(RANK, level)) return level as LogLevel;
  throw new Error(`DISPATCH_LOG_LEVEL must be ${Object.keys(RANK).join(', ')} (in any case), got ${JSON.stringify(value)}`);
}

let warnedLevel = false;

/** DISPATCH_LOG_LEVEL's level; info, with one warning on stderr per process, when it names none. */
function defaultLevel(): LogLevel {
  try {
    return logLevelFromEnv(process.env);
  } catch (error) {
    if (!warnedLevel) process.stderr.write(`${(error as Error).message}; logging at info\n`);
    warnedLevel = true;
    return 'info';
  }
}

/** Creates a logger writing at `level` and above (default from DISPATCH_LOG_LEVEL, else info). */
export function createLogger(level: LogLevel = defaultLevel(), write = (line: string) => process.stderr.write(line)): Logger {
  const min = RANK[level];
  const log = (lvl: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return;
    try {
      write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, message, ...fields })}\n`);
    } catch {
      // logging never fails a call
    }
  };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** Logs nothing. */
export const SILENT_LOGGER: Logger = { debug() {}, info() {}, warn() {}, error() {} };
