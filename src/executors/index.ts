export type { Delivery, Executor, ExecutorContext, ExecutorSet, UnlistedSource } from './executor';
export { createBuiltinExecutor, BUILTIN_TOOLS, builtinNames } from './builtin-executor';
export type { BuiltinTool } from './builtin-executor';
export { createHttpExecutor } from './http-executor';
export type { HttpExecutor, HttpExecutorOptions } from './http-executor';
export { fromTransportError, fromHttpStatus, parseRetryAfter } from './http-errors';
// Not createHttpTransport, which loads undici (see undici-lazy.ts): import it from './http-transport'.
export { DestinationDeniedError } from './destination-denied';
export type { HttpTransportOptions } from './http-transport';
