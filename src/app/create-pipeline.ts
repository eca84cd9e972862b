import { ConfigError, type DispatchConfig } from '../config';
import { suggestKey } from '../config/unknown-key';
import { BUILTIN_TOOLS, createBuiltinExecutor, createHttpExecutor, type BuiltinTool, type Executor } from '../executors';
import { createLogger, type Logger } from '../log';
import { DEFAULT_LIMITS, type Limits } from '../options';
import {
  applyMiddleware,
  defaultGuards,
  NOOP_OBSERVER,
  capOutput,
  retryTreeReflector,
  type Guards,
  type Middleware,
  type Observer,
  type PipelineDeps,
  type ToolHandler,
} from '../pipeline';
import { createDestinationPolicy, createSchemaCompiler, createToolRegistry, type ToolRegistry } from '../registry';
import { createScratchDirs, type ScratchDirs } from '../session';
import { createMemoryStore, type Store } from '../store';

/** What the composition root may be given instead of its defaults. */
export interface PipelineOptions {
  readonly config?: DispatchConfig;
  /** @default the in-memory store */
  readonly store?: Store;
  readonly logger?: Logger;
  readonly observer?: Observer;
  readonly guards?: Guards;
  /** Middleware, first outermost; the output cap is always innermost (in the core handler). */
  readonly middleware?: readonly Middleware[];
  /** Executors beyond http and builtin, by ToolSpec executor case (`worker`, `mcp`). */
  readonly executors?: ReadonlyMap<string, Executor>;
  readonly builtins?: ReadonlyMap<string, BuiltinTool>;
  /** @default private directories under the OS temp dir (createScratchDirs); the app closes them */
  readonly scratch?: ScratchDirs;
}

/** Builds the pipeline's dependencies and registers the config file's tools (tenant ""). */
export function createPipeline(options: PipelineOptions = {}): PipelineDeps {
  const limits: Limits = options.config?.limits ?? DEFAULT_LIMITS;
  const httpPolicy = createDestinationPolicy(options.config?.registry);
  // A UTF-8 character is at most 4 bytes: read no more than the output cap can keep.
  const http = createHttpExecutor({ maxResponseBytes: limits.maxToolOutputChars * 4, maxAnswerChars: limits.maxToolOutputChars, maxAnswerBytesInFlight: limits.maxAnswerBytesInFlight, maxAnswerBytesInFlightPerTenant: limits.maxAnswerBytesInFlightPerTenant, policy: httpPolicy });
  const executors = new Map<string, Executor>([
    ['http', http],
    ['builtin', createBuiltinExecutor(options.builtins)],
    ...(options.executors ?? []),
  ]);
  const logger = options.logger ?? createLogger();
  const registry: ToolRegistry = createToolRegistry(createSchemaCompiler(limits.maxSchemaBytes), () => new Set(executors.keys()), { httpPolicy, allowTenantSkipRedaction: options.config?.registry.allowTenantSkipRedaction, allowTenantMcp: options.config?.registry.allowTenantMcp, maxSchemaBytesPerTenant: limits.maxSchemaBytesPerTenant, maxSchemaBytesCompiledPerMinute: limits.maxSchemaBytesCompiledPerMinutePerTenant, logger });
  // undici loads, and the HTTP agents are made, with the first HTTP tool registered (from the config
  // file, by RPC, or shared by another replica), not with the app nor at that tool's first call,
  // which the load (~80 ms) would delay, perhaps past a short timeout_ms.
  registry.onChange((change) => void (change.type === 'register' && change.specs.some((spec) => spec.executor.case === 'http') && http.prepare()));
  // The output cap is the innermost stage, in the executor's own continuation (one promise fewer).
  const maxChars = limits.maxToolOutputChars;
  const asOutput = (text: string) => capOutput({ text }, maxChars);
  const core: ToolHandler = ({ tool, args, ctx }) => {
    const executor = executors.get(tool.spec.executor.case ?? '');
    if (!executor) return Promise.reject(new Error(`no executor for "${tool.spec.executor.case}"`));
    return executor.execute(tool, args, ctx).then(asOutput);
  };
  const scratch = options.scratch ?? createScratchDirs({ logger });
  const deps: PipelineDeps = {
    registry,
    store: options.store ?? createMemoryStore({ maxSessions: limits.maxSessions, ...(limits.maxSpilledChars > 0 ? { maxSpilledChars: limits.maxSpilledChars } : {}), logger }),
    executors,
    handler: applyMiddleware(core, options.middleware ?? []),
    guards: options.guards ?? defaultGuards(retryTreeReflector),
    observer: options.observer ?? NOOP_OBSERVER,
    limits,
    scratch,
    logger,
  };
  // A session's scratch directory ends with it, on every replica (the store relays the others' ends);
  // the replica that ends it removes it before endSession resolves (within the store's timeout).
  deps.store.onSessionEnd((scope) => scratch.remove(scope.tenant, scope.sessionId));
  if (options.config && options.config.tools.length > 0) {
    const { file, tools } = options.config;
    // The config's tools are refused as a mistake of its file, which dispatchd names.
    const refuse = (problem: string, path = '') => new ConfigError(file, path, problem);
    // A misspelt built-in would start, and fail every call (UNAVAILABLE, its breaker counting).
    // config.tools is the file's `tools:` list in its order: the index names the entry (tools[0]).
    for (const [i, spec] of tools.entries()) {
      const name = spec.executor.case === 'builtin' ? spec.executor.value.name : undefined;
      if (name !== undefined && !BUILTIN_TOOLS.has(name) && !options.builtins?.has(name)) {
        const builtins = [...BUILTIN_TOOLS.keys(), ...(options.builtins?.keys() ?? [])];
        const meant = suggestKey(name, builtins);
        throw refuse(`there is no built-in tool ${JSON.stringify(name)} (${meant === undefined ? '' : `did you mean ${meant}? `}built-ins: ${builtins.join(', ')})`, `tools[${i}].builtin.name`);
      }
    }
    try {
      registry.register(tools, { tenant: '' });
    } catch (error) {
      throw refuse((error as Error).message);
    }
  }
  return deps;
}
