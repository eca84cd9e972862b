import { throttledPerLogger } from '../log';

/**
 * The warn the pipeline logs a store step's failure with (Redis away, out of memory, read-only):
 * each message at most once per 10 s per tool, saying how many it held back (`notLoggedBefore`).
 * Logged at every attempt, a Redis refusing writes wrote two lines per call (2,000 a second at
 * 1,000 calls a second), where the calls' own errors and `dispatch_store_up` tell the rest.
 */
export const storeWarn = throttledPerLogger({ keyOf: (message, fields) => `${message}\u0000${String(fields?.tool ?? '')}` });
