import { MAX_TIMER_MS } from '../../options/limits';

/**
 * The delay of a timer due at `at` (epoch ms): at least 1, at most MAX_TIMER_MS (about 24.8
 * days), as Node runs a longer timer at once and a tool's timeout_ms may be up to 2^32-1 (a call
 * running longer than MAX_TIMER_MS ends then).
 */
export const timerMs = (at: number) => Math.min(MAX_TIMER_MS, Math.max(1, at - Date.now()));
