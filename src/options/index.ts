export { DEFAULT_LIMITS, MAX_TIMER_MS, resolveLimits } from './limits';
export type { Limits } from './limits';
export { TOOL_DEFAULTS, MAX_RECOVERY_ATTEMPTS } from './tool-defaults';
export { checkInteger } from './integer-option';
export type { IntegerRange } from './integer-option';
export { handleLength, leastMarker, leastResultBytes, leastResponseBytes, leastWarning, RESPONSE_SLACK_BYTES, TYPICAL_PARTS } from './result-floor';
export type { ResultFloorParts } from './result-floor';
