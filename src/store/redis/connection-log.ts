import { throttledWarn, type Logger } from '../../log';

/**
 * How often one connection logs each of its warnings while it fails again and again (an error
 * text after another, a connection that drops each time it is back), in ms: the throttle's summary
 * says how many more (`repeated`).
 */
export const CONNECTION_LOG_INTERVAL_MS = 60_000;

/** Error texts one connection remembers in an outage, each logged once; past it the throttle alone bounds them. */
const MAX_ERROR_TEXTS = 16;

/** ioredis's text of a Sentinel failure holds the retry delay, which changes each attempt: not part of what it says. */
const sameError = (message: string) => message.replace(/ after \d+ms\./, '.');

const LOST = 'redis connection lost; reconnecting';
const RESTORED = 'redis connection restored';

/** What one Redis connection says of its outages, each line with the connection's name. */
export interface ConnectionLog {
  /** An error of the connection: each text (`error`) once until it is ready again (a Sentinel lookup fails again and again without a close). */
  error(message: string, error: string, fields?: Record<string, unknown>): void;
  /** The connection dropped (said once until it is ready again). */
  lost(): void;
  /** The connection is ready: said (with how long it was down) when its loss was. */
  ready(): void;
}

/**
 * The log of the connection `fields` name (`connection`, `mode`). An outage of any length logs
 * at most the loss, each distinct error once, and the recovery; a connection that fails in more
 * ways, or drops each time it is back, at most one line a message per CONNECTION_LOG_INTERVAL_MS
 * and its summary (throttledWarn): 9 connections each logging every reconnection attempt buried
 * which one had failed. `isReady` tells a summary of losses whether the connection is back.
 */
export function createConnectionLog(logger: Logger | undefined, fields: Readonly<Record<string, unknown>>, isReady: () => boolean): ConnectionLog {
  const seen = new Set<string>();
  let down: number | undefined;
  let lossSaid = false;
  const sink: Logger | undefined = logger && {
    ...logger,
    warn(message, line) {
      const summary = line?.repeated !== undefined;
      if (message === LOST && !summary) lossSaid = true;
      logger.warn(message, summary && message === LOST ? { ...line, connected: isReady() } : line);
    },
  };
  const warn = throttledWarn(sink, CONNECTION_LOG_INTERVAL_MS);
  return {
    error(message, error, extra) {
      const key = sameError(error);
      if (seen.has(key)) return;
      if (seen.size < MAX_ERROR_TEXTS) seen.add(key);
      warn(message, { ...fields, error, ...extra });
    },
    lost() {
      if (down !== undefined) return;
      down = Date.now();
      lossSaid = false;
      warn(LOST, fields);
    },
    ready() {
      if (down !== undefined && lossSaid) logger?.info(RESTORED, { ...fields, downMs: Date.now() - down });
      down = undefined;
      seen.clear();
    },
  };
}
