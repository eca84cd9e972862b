import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import { MAX_TIMER_MS } from '../options/limits';
import { withoutScratchPaths, type ScratchHold } from '../session';
import { hideScratchOutput } from '../session/scratch-paths';
import type { Delivery, Executor, ExecutorContext } from './executor';

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

/** `sleep`'s wait: `ms` as a number (a negative or non-number one is 0), at most Node's longest timer. */
function sleepMs(args: unknown): number {
  const ms = Number((args as { ms?: unknown } | null)?.ms ?? 0);
  if (ms > MAX_TIMER_MS) {
    // Node would fire a longer timer after 1 ms (and warn on stderr).
    throw new DispatchError(ErrorKind.INVALID_ARGUMENTS, `sleep: ms must be at most ${MAX_TIMER_MS}, got ${ms}`, { phase: 'before' });
  }
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** The built-in tools: `echo` returns its arguments as JSON; `sleep { ms }` waits, then echoes. */
export const BUILTIN_TOOLS: ReadonlyMap<string, BuiltinTool> = new Map<string, BuiltinTool>([
  ['echo', async (args) => JSON.stringify(args)],
  [
    'sleep',
    async (args, ctx) => {
      await abortableDelay(sleepMs(args), ctx.signal);
      return JSON.stringify(args);
    },
  ],
]);

/** A context that can hold its session's scratch directory (an attempt's; a test's may not). */
type HoldingContext = ExecutorContext & Required<Pick<ExecutorContext, 'holdScratchDir'>>;

const canHold = (ctx: ExecutorContext): ctx is HoldingContext => ctx.holdScratchDir !== undefined;

/**
 * A built-in's context: its attempt's, except that scratchDir() holds the session's directory until
 * the built-in settles, so neither expiry nor the maxDirs bound removes it under a running call.
 */
class BuiltinContext implements ExecutorContext {
  /** Made on the first scratchDir(): most built-ins never ask. */
  private holds: ScratchHold[] | undefined;
  private settled = false;
  /** Every directory scratchDir() gave, which the built-in's errors and output must not name (session/scratch-paths.ts). */
  readonly dirs: string[] = [];
  /** The built-in's output, its directories hidden (see createBuiltinExecutor); releases them. */
  readonly done = (output: string): string => {
    try {
      return this.dirs.length === 0 ? output : hideScratchOutput(output, this.dirs);
    } catch (error) {
      throw withoutScratchPaths(error, this.dirs);
    } finally {
      this.release();
    }
  };
  /** The built-in's error, its directories hidden; releases them. */
  readonly failed = (error: unknown): never => {
    this.release();
    throw withoutScratchPaths(error, this.dirs);
  };

  constructor(private readonly ctx: HoldingContext) {}

  get tenant(): string {
    return this.ctx.tenant;
  }
  get sessionId(): string {
    return this.ctx.sessionId;
  }
  get toolCallId(): string {
    return this.ctx.toolCallId;
  }
  get attempt(): number {
    return this.ctx.attempt;
  }
  get idempotencyKey(): string {
    return this.ctx.idempotencyKey;
  }
  get localKey(): string {
    return this.ctx.localKey;
  }
  get signal(): AbortSignal {
    return this.ctx.signal;
  }
  get deadline(): number {
    return this.ctx.deadline;
  }
  get traceparent(): string | undefined {
    return this.ctx.traceparent;
  }
  get tracestate(): string | undefined {
    return this.ctx.tracestate;
  }
  onAbort(listener: (reason: unknown) => void): () => void {
    return this.ctx.onAbort(listener);
  }
  delivery(state: Delivery): void {
    this.ctx.delivery?.(state);
  }
  holdScratchDir(): Promise<ScratchHold> {
    return this.ctx.holdScratchDir();
  }

  async scratchDir(): Promise<string> {
    const hold = await this.ctx.holdScratchDir();
    if (!this.dirs.includes(hold.path)) this.dirs.push(hold.path);
    // One hold per directory (a new one after the session ended meanwhile); none past the end.
    if (this.settled || this.holds?.some((held) => held.path === hold.path)) hold.release();
    else (this.holds ??= []).push(hold);
    return hold.path;
  }

  /** The built-in settled: its directories go back to expiry and the maxDirs bound. */
  release(): void {
    this.settled = true;
    for (const hold of this.holds ?? []) hold.release();
    this.holds = undefined;
  }
}

/** What `impl` gives, as a promise: a value it returns or an error it throws, settled. */
function settled(impl: BuiltinTool, args: unknown, ctx: ExecutorContext): Promise<string> {
  try {
    return Promise.resolve(impl(args, ctx));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Creates the executor of built-in tools, optionally with extra ones (tests, embedding). */
export function createBuiltinExecutor(extra: ReadonlyMap<string, BuiltinTool> = new Map()): Executor {
  const tools = new Map([...BUILTIN_TOOLS, ...extra]);
  return {
    // Not async: a promise and one pair of callbacks per call, not an async frame (as the async
    // version, a built-in that throws or is missing rejects, never throws).
    execute(tool, args, ctx) {
      const name = tool.spec.executor.case === 'builtin' ? tool.spec.executor.value.name : '';
      const impl = tools.get(name);
      if (!impl) {
        return Promise.reject(new DispatchError(ErrorKind.UNAVAILABLE, `built-in tool "${name}" does not exist`, { phase: 'before' }));
      }
      if (!canHold(ctx)) return settled(impl, args, ctx);
      const scoped = new BuiltinContext(ctx);
      // A listing or a resolved path it returns names no server path; only its own directories are
      // rewritten, at path boundaries: the rest (a file it read with /tmp/... in it) is content.
      return settled(impl, args, scoped).then(scoped.done, scoped.failed);
    },
  };
}

/** Names of the built-in tools, for validating specs. */
export const builtinNames = (): string[] => [...BUILTIN_TOOLS.keys()];
