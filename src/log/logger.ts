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

function parseLevel(value: string | undefined): LogLevel {
  return value === 'debug' || value === 'info' || value === 'warn' || value === 'error' ? value : 'info';
}

/** Creates a logger writing at `level` and above (default from DISPATCH_LOG_LEVEL, else info). */
export function createLogger(level: LogLevel = parseLevel(process.env.DISPATCH_LOG_LEVEL), write = (line: string) => process.stderr.write(line)): Logger {
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
