export { DEFAULT_LIMITS, resolveLimits } from './limits';
export type { Limits } from './limits';
export { TOOL_DEFAULTS, MAX_RECOVERY_ATTEMPTS } from './tool-defaults';
