export { createLogger, SILENT_LOGGER } from './logger';
export type { Logger, LogLevel } from './logger';
export { shapeOf } from './shape';
export { messageShape, MAX_THROTTLE_KEYS, throttledPerLogger, throttledWarn } from './throttled';
export type { ThrottleOptions } from './throttled';
