import type { Logger } from './logger';

/** Options of {@link throttledWarn}. */
export interface ThrottleOptions {
  /** The least time between two logs of one key, in ms. @default 10000 */
  readonly intervalMs?: number;
  /**
   * The key a message is throttled by. @default the message itself (fixed texts, what varies in
   * `fields`); {@link messageShape} for texts that carry ids or values (OpenTelemetry's diag).
   */
  readonly keyOf?: (message: string, fields?: Record<string, unknown>) => string;
  /** The level logged at. @default 'warn' */
  readonly level?: 'warn' | 'error';
  /** Keys remembered at once; past it the one logged longest ago is forgotten. @default 1000 */
  readonly maxKeys?: number;
}

/** Keys a throttle remembers at once (ThrottleOptions.maxKeys). */
export const MAX_THROTTLE_KEYS = 1000;

/**
 * `message` with what varies between two reports of one failure written `#`: quoted values
 * (`"..."`, `'...'`, `` `...` ``), `key=value` values, and runs of digits or of hex
 * digits with at least one digit (ids, trace ids, UUIDs, ports, counts). So a warning that names a
 * header's value or a request id is one key, not one per report.
 */
export function messageShape(message: string): string {
  return message
    .replace(/"(?:[^"\\]|\\.)*"|(?<!\w)'(?:[^'\\]|\\.)*'|`[^`]*`/g, '#')
    .replace(/=[^\s,;)\]}]+/g, '=#')
    .replace(/\b(?=[0-9a-f-]*\d)[0-9a-f][0-9a-f-]*\b/gi, '#')
    .replace(/\d+/g, '#');
}

/**
 * A warn that logs each message at most once per `intervalMs`, for failures that repeat per call
 * or per batch. Throttled per message (or per its `keyOf`), so that one warning does not hide
 * another for the interval (a relay's "announce failed" once hid its "publish failed"). A line
 * logged after some of its key were held back says how many (`notLoggedBefore`), so an operator
 * can tell one failure from a thousand. And when the interval ends with some held back, a line
 * says so then (`repeated`, with the last one's fields): before, the count came with the key's next
 * line, which may be minutes later and about another incident (an SRE read "notLoggedBefore: 31",
 * of an 8 s Redis outage, on a warning 10 minutes after it). At most `maxKeys` are remembered, so
 * that messages that vary do not grow the map without bound.
 */
export function throttledWarn(logger: Logger | undefined, options: number | ThrottleOptions = {}): (message: string, fields?: Record<string, unknown>) => void {
  const { intervalMs = 10_000, keyOf = (message: string) => message, maxKeys = MAX_THROTTLE_KEYS, level = 'warn' } = typeof options === 'number' ? { intervalMs: options } : options;
  // In the order logged: the first is the one logged longest ago.
  const lastLogged = new Map<string, Throttled>();
  /** The interval of `entry` ended: what it held back is said now, and the next line starts another. */
  const summarise = (key: string, entry: Throttled) => {
    entry.timer = undefined;
    if (lastLogged.get(key) !== entry || entry.held === 0) return;
    logger?.[level](entry.message, { ...entry.fields, repeated: entry.held, withinMs: intervalMs });
    entry.held = 0;
  };
  return (message, fields) => {
    const now = Date.now();
    const key = keyOf(message, fields);
    const last = lastLogged.get(key);
    if (last && now - last.at < intervalMs) {
      last.held++;
      last.message = message;
      last.fields = fields;
      last.timer ??= setTimeout(() => summarise(key, last), Math.max(0, last.at + intervalMs - now)).unref();
      return;
    }
    if (last?.timer) clearTimeout(last.timer);
    lastLogged.delete(key);
    lastLogged.set(key, { at: now, held: 0, message });
    if (lastLogged.size > maxKeys) {
      const oldest = lastLogged.keys().next().value!;
      clearTimeout(lastLogged.get(oldest)!.timer);
      lastLogged.delete(oldest);
    }
    logger?.[level](message, last && last.held > 0 ? { ...fields, notLoggedBefore: last.held } : fields);
  };
}

/** A key's last line and what was held back since. */
interface Throttled {
  at: number;
  held: number;
  /** The last held back (a key's messages may differ: keyOf), said at the interval's end. */
  message: string;
  fields?: Record<string, unknown>;
  timer?: NodeJS.Timeout;
}

/**
 * A {@link throttledWarn} for each logger, made at its first use: one throttle a module's warning
 * shares across the calls (or connections) that report it, per logger (an app's, a test's).
 */
export function throttledPerLogger(options: number | ThrottleOptions = {}): (logger: Logger) => ReturnType<typeof throttledWarn> {
  const warns = new WeakMap<Logger, ReturnType<typeof throttledWarn>>();
  return (logger) => {
    let warn = warns.get(logger);
    if (!warn) warns.set(logger, (warn = throttledWarn(logger, options)));
    return warn;
  };
}
