import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import type { Executor, ExecutorContext } from './executor';

/** A tool implemented inside dispatch. */
export type BuiltinTool = (args: unknown, ctx: ExecutorContext) => Promise<string>;

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The built-in tools: `echo` returns its arguments as JSON; `sleep { ms }` waits, then echoes. */
export const BUILTIN_TOOLS: ReadonlyMap<string, BuiltinTool> = new Map<string, BuiltinTool>([
  ['echo', async (args) => JSON.stringify(args)],
  [
    'sleep',
    async (args, ctx) => {
      const ms = Number((args as { ms?: unknown } | null)?.ms ?? 0);
      await abortableDelay(Number.isFinite(ms) && ms > 0 ? ms : 0, ctx.signal);
      return JSON.stringify(args);
    },
  ],
]);

/** Creates the executor of built-in tools, optionally with extra ones (tests, embedding). */
export function createBuiltinExecutor(extra: ReadonlyMap<string, BuiltinTool> = new Map()): Executor {
  const tools = new Map([...BUILTIN_TOOLS, ...extra]);
  return {
    async execute(tool, args, ctx) {
      const name = tool.spec.executor.case === 'builtin' ? tool.spec.executor.value.name : '';
      const impl = tools.get(name);
      if (!impl) {
        throw new DispatchError(ErrorKind.UNAVAILABLE, `built-in tool "${name}" does not exist`, { phase: 'before' });
      }
      return impl(args, ctx);
    },
  };
}

/** Names of the built-in tools, for validating specs. */
export const builtinNames = (): string[] => [...BUILTIN_TOOLS.keys()];
