export type { Delivery, Executor, ExecutorContext, ExecutorSet } from './executor';
export { createBuiltinExecutor, BUILTIN_TOOLS, builtinNames } from './builtin-executor';
export type { BuiltinTool } from './builtin-executor';
export { createHttpExecutor } from './http-executor';
export type { HttpExecutorOptions } from './http-executor';
export { fromTransportError, fromHttpStatus, parseRetryAfter } from './http-errors';
export { createHttpTransport, DestinationDeniedError } from './http-transport';
export type { HttpTransportOptions } from './http-transport';
