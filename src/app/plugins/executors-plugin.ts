import { setMaxListeners } from 'node:events';
import { ConfigError, type DispatchConfig } from '../../config';
import type { Executor } from '../../executors';
import { parseMcpServers, type McpServerConfig } from '../../executors/mcp/mcp-config';
import { unconfiguredMcpExecutor } from '../../executors/mcp/mcp-unconfigured';
import { createRedisRelay, createWorkerExecutor, createWorkerPool, createWorkHandler, resolveWorkerOptions, type RedisRelay, type WorkerOptions } from '../../executors/worker';
import { breakerKey, parseBreakerKey, type PipelineDeps } from '../../pipeline';
import type { Plugin, PluginContext, PluginFactory } from '../plugin';
import { allClosed } from '../close-app';

/** Options of the executors plugin beyond the config file (tests, embedding). */
export interface ExecutorsPluginOptions {
  readonly worker?: WorkerOptions;
}

/**
 * Worker streams (`WorkerService.Work`, routed across replicas through Redis when a Redis URL is
 * set) and the MCP servers of the config's `mcp_servers:` (issue 7).
 */
export function createExecutorsPlugin(pluginOptions: ExecutorsPluginOptions = {}): PluginFactory {
  return async (ctx: PluginContext): Promise<Plugin> => {
    const options = resolveWorkerOptions(pluginOptions.worker);
    const servers = parseMcpServers(ctx.config.mcpServers, ctx.config.file);
    checkMcpTools(ctx.config, servers.map((server) => server.name));
    const mcp = mcpOf(servers, ctx);
    const pool = createWorkerPool({ heartbeatTimeoutMs: options.heartbeatTimeoutMs, sweepIntervalMs: options.sweepIntervalMs, logger: ctx.logger });
    let deps: PipelineDeps | undefined;
    let relay: RedisRelay | undefined;
    const executors = new Map<string, Executor>([
      ['worker', createWorkerExecutor(pool, () => relay)],
      ['mcp', mcp.executor],
    ]);
    const draining = new AbortController();
    // Each worker stream not yet hosting listens until it is (there is no fixed bound on them).
    setMaxListeners(0, draining.signal);
    const work = createWorkHandler({
      pool,
      draining: draining.signal,
      options,
      logger: ctx.logger,
      authenticate: ctx.authenticate,
      registry: () => {
        if (!deps) throw new Error('the worker service was called before the pipeline was attached');
        return deps.registry;
      },
      maxToolsPerTenant: () => deps?.limits.maxToolsPerTenant ?? Infinity,
      maxSchemaBytesPerTenant: () => deps?.limits.maxSchemaBytesPerTenant ?? Infinity,
      messageLimits: () => deps?.limits ?? ctx.config.limits,
      onRegistered: (tenant, specs) => relay?.publishSpecs(tenant, specs),
    });
    return {
      name: 'executors',
      executors,
      handlers: { worker: { work } },
      async attach(pipeline) {
        deps = pipeline;
        // A worker hosting a tool connected, here or to another replica: the tool's breaker, if
        // calls that found no worker opened it, half-opens now. Before, the worker back, its calls
        // were refused BREAKER_OPEN for up to half_open_after_ms (30 s by default).
        const halfOpen = (tenant: string, tool: string, again = false) => pipeline.guards.breaker.halfOpen?.(breakerKey({ tenant, name: tool }), again);
        pool.onHostedChange((tenant, tool, hosted) => hosted && halfOpen(tenant, tool));
        const openTools = () =>
          (pipeline.guards.breaker.openTools?.() ?? []).map(parseBreakerKey).filter(({ tenant, tool }) => pipeline.registry.lookup(tenant, tool)?.spec.executor.case === 'worker');
        if (ctx.options.redisUrl) relay = await createRedisRelay({ url: ctx.options.redisUrl, pool, registry: pipeline.registry, logger: ctx.logger, options, onHosted: halfOpen, openTools });
        // A worker tool removed by RemoveTool must leave the shared specs too, or replicas loading
        // them (at start, when their subscription moves) would register it again. RemoveTool
        // answers once that is done (ToolRegistry.removeShared), and UNAVAILABLE when it failed.
        pipeline.registry.onChange((change) => {
          if (change.type !== 'remove' || change.tenant === '' || !relay) return;
          return relay.forgetSpec(change.tenant, change.name).catch((error: Error) => {
            ctx.logger.warn('could not remove a worker tool from the shared specs', { tenant: change.tenant, tool: change.name, error: error.message });
            throw error;
          });
        });
        await mcp.start(pipeline.registry);
      },
      started(server) {
        server.draining.addEventListener('abort', () => (pool.drain(), draining.abort()), { once: true });
      },
      // The worker relay (Redis) and the MCP servers (child processes) close together.
      async close() {
        const closeWorkers = async () => {
          await relay?.close();
          pool.close();
        };
        await allClosed([closeWorkers(), mcp.close()]);
      },
    };
  };
}

/** What the plugin runs of MCP: the executor, and the servers it starts and closes. */
interface McpParts {
  readonly executor: Executor;
  start(registry: PipelineDeps['registry']): Promise<void>;
  close(): Promise<void>;
}

const NO_MCP: McpParts = { executor: unconfiguredMcpExecutor, start: async () => undefined, close: async () => undefined };

/**
 * The MCP servers of `mcp_servers:` and their executor. With none configured, the MCP SDK and zod
 * are not loaded: they were ~0.2 s of every start (~0.3 s of each test file building an app).
 */
function mcpOf(servers: readonly McpServerConfig[], ctx: PluginContext): McpParts {
  if (servers.length === 0) return NO_MCP;
  const { createMcpExecutor, createMcpServers } = require('../../executors/mcp') as typeof import('../../executors/mcp');
  // A UTF-8 character is at most 4 bytes: read no more of an answer than the output cap can keep.
  const running = createMcpServers(servers, ctx.logger, { maxAnswerBytes: ctx.config.limits.maxToolOutputChars * 4 });
  return { executor: createMcpExecutor(running), start: (registry) => running.start(registry), close: () => running.close() };
}

/**
 * Refuses a config-file tool naming a server not in `mcp_servers:`: it would start and fail every
 * call UNAVAILABLE. (A tool registered by RPC may name one; its calls fail the same way.)
 */
function checkMcpTools(config: DispatchConfig, servers: readonly string[]): void {
  config.tools.forEach((spec, i) => {
    if (spec.executor.case !== 'mcp' || servers.includes(spec.executor.value.server)) return;
    const configured = servers.length === 0 ? 'none is configured' : `configured: ${servers.join(', ')}`;
    throw new ConfigError(config.file, `tools[${i}].mcp.server`, `no server "${spec.executor.value.server}" in mcp_servers (${configured})`);
  });
}

/** The plugin with default options, as the app assembles it. */
export const executorsPlugin: PluginFactory = createExecutorsPlugin();
