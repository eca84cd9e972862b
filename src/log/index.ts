export { createLogger, SILENT_LOGGER } from './logger';
export type { Logger, LogLevel } from './logger';
export { shapeOf } from './shape';
export { throttledWarn } from './throttled';
