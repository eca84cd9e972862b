import { throttledWarn, type Logger } from '../log';

/** Each logger's warn for the store's failures in the pipeline. */
const warns = new WeakMap<Logger, ReturnType<typeof throttledWarn>>();

/**
 * The warn the pipeline logs a store step's failure with (Redis away, out of memory, read-only):
 * each message at most once per 10 s per tool, saying how many it held back (`notLoggedBefore`).
 * Logged at every attempt, a Redis refusing writes wrote two lines per call (2,000 a second at
 * 1,000 calls a second), where the calls' own errors and `dispatch_store_up` tell the rest.
 */
export const storeWarn = (logger: Logger): ReturnType<typeof throttledWarn> => warns.get(logger) ?? warns.set(logger, throttledWarn(logger, { keyOf: perTool })).get(logger)!;

const perTool = (message: string, fields?: Record<string, unknown>) => `${message}\u0000${String(fields?.tool ?? '')}`;
