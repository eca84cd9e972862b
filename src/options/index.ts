export { DEFAULT_LIMITS, MAX_TIMER_MS, resolveLimits } from './limits';
export type { Limits } from './limits';
export { TOOL_DEFAULTS, MAX_RECOVERY_ATTEMPTS } from './tool-defaults';
export { checkInteger } from './integer-option';
export type { IntegerRange } from './integer-option';
