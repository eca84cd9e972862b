import type { Logger } from './logger';

/**
 * A warn that logs each message at most once per `intervalMs`, for failures that repeat per call
 * or per batch. Throttled per message, so that one warning does not hide another for the interval
 * (a relay's "announce failed" once hid its "publish failed"). Messages are fixed texts, with what
 * varies in `fields`: each distinct text is remembered.
 */
export function throttledWarn(logger: Logger | undefined, intervalMs = 10_000): (message: string, fields?: Record<string, unknown>) => void {
  const lastLogged = new Map<string, number>();
  return (message, fields) => {
    const now = Date.now();
    if (now - (lastLogged.get(message) ?? -Infinity) < intervalMs) return;
    lastLogged.set(message, now);
    logger?.warn(message, fields);
  };
}
