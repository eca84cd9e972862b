import type { Logger } from '../log';

/** Stray rejections logged per minute at most; the rest are counted in the next line logged. */
const MAX_LOGGED_PER_MINUTE = 10;

/**
 * Keeps dispatchd serving through a promise that rejected with no handler, which Node's default
 * (`--unhandled-rejections=throw`) turns into the end of the process: every agent's calls in
 * flight cut off, their side effects' outcome unknown, for what is most often a library's own
 * fire-and-forget command on a connection that just closed (ioredis's re-SUBSCRIBE and ASKING were
 * two). A rejection unwinds no code half-way, so the state it leaves is what a handled one would:
 * it is logged at error level (a bug to report), at most {@link MAX_LOGGED_PER_MINUTE} a minute.
 * An uncaught exception still ends the process (Node's default): it can leave state half-changed.
 * Returns a function that removes the handler.
 */
export function logStrayRejections(logger: Logger, proc: NodeJS.Process = process): () => void {
  let windowStart = 0;
  let logged = 0;
  let suppressed = 0;
  const onRejection = (reason: unknown) => {
    const now = Date.now();
    if (now - windowStart >= 60_000) {
      windowStart = now;
      logged = 0;
    }
    if (logged >= MAX_LOGGED_PER_MINUTE) return void suppressed++;
    logged++;
    const error = reason instanceof Error ? { error: reason.message, stack: reason.stack } : { error: String(reason) };
    logger.error('a promise was rejected with no handler (a bug); serving on', { ...error, ...(suppressed > 0 ? { notLoggedBefore: suppressed } : {}) });
    suppressed = 0;
  };
  proc.on('unhandledRejection', onRejection);
  return () => void proc.off('unhandledRejection', onRejection);
}
