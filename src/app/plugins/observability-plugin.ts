import { createEventBus, createEventObserver, createRedisRelay, subscribeHandler, type CallSummary, type RedisRelay } from '../../events';
import type { ToolRegistry } from '../../registry';
import { connectRedis, namedConnector } from '../../store/redis';
import { createObservedHealth, createSharedToolStats, createToolStats, createTracing, isHealthSource, metricsListenFromEnv, rateWindow, sharedStatsLimitsFromEnv, startMetrics, telemetrySettings, toolStatsHandler, type Metrics, type SharedToolStats, type ToolHealthSource } from '../../telemetry';
import { parseBreakerKey, type ToolRates, type ToolSlots } from '../../pipeline';
import type { TurnCounts } from '../../server';
import type { Plugin, PluginContext } from '../plugin';
import { allClosed } from '../close-app';
import { ListenFailure } from '../listen-failure';

/**
 * Events, Subscribe, traces, metrics and GetToolStats (issue 6). Traces are exported when the
 * OTEL_* variables ask for it; metrics are served when `--metrics-listen` is set; events cross
 * replicas through Redis when a Redis URL is set.
 */
export async function observabilityPlugin(ctx: PluginContext): Promise<Plugin> {
  const { logger, config } = ctx;
  const settings = telemetrySettings(config, { singleTenant: ctx.singleTenant });
  const bus = createEventBus({ subscriberBuffer: config.limits.subscriberBuffer, maxSubscribersPerTenant: config.limits.maxSubscribersPerTenant });
  let registry: ToolRegistry | undefined;
  // Whether a tool is registered now, asked where a pair is first counted (the stats, their shared
  // deltas, the metrics' label pairs): a call that ends after its tool's removal (here or on another
  // replica) brings back none of what went with the tool.
  const live = (tenant: string, tool: string) => !registry || registry.lookup(tenant, tool) !== undefined;
  const stats = createToolStats({ window: rateWindow(settings.rateWindowSeconds, Date.now, settings.rateBucketSeconds), live });
  const observed = createObservedHealth();
  let health: ToolHealthSource = observed;
  let metrics: Metrics | undefined;
  let relay: RedisRelay | undefined;
  let shared: SharedToolStats | undefined;
  let turns: (() => TurnCounts) | undefined;
  let slots: ToolSlots | undefined;
  let rates: ToolRates | undefined;
  let storeUp: (() => boolean) | undefined;
  const tracing = createTracing(process.env, logger);
  // The gauge lists the breakers of tools still registered: a tool removed (here, or on another
  // replica) leaves it, its observed state forgotten (the name registered again starts closed).
  const heldStates = () => {
    for (const key of registry ? [...observed.states().keys()] : []) {
      const { tenant, tool } = parseBreakerKey(key);
      // A tenant's own breaker of a shared tool (callBreakerKey) stays while the shared tool does.
      const owner = registry?.lookup(tenant, tool)?.tenant;
      if (owner !== tenant && owner !== '') observed.forget(key);
    }
    return observed.states();
  };
  try {
    const listen = metricsListenFromEnv(ctx.options.metricsListen || undefined, process.env, logger);
    if (listen) {
      metrics = await startMetrics({ listen, stats, breakerStates: heldStates, subscribers: () => bus.subscriberCount, turns: () => turns?.(), tracesLost: () => tracing.lost(), storeUp: () => storeUp?.(), live, slotsInUse: () => slots?.inUse(), slotRefusals: () => slots?.refused(), rateRefusals: () => rates?.refused(), logger, maxLabelPairs: settings.maxLabelPairs, maxLabelPairsPerTenant: settings.maxLabelPairsPerTenant, scrapeCacheMs: settings.scrapeCacheMs, maxScrapeConnections: settings.maxScrapeConnections }).catch((error: NodeJS.ErrnoException) => {
        // A bare "listen EADDRINUSE" (a system error, with a code) names neither the flag nor the port's use.
        throw error.code === undefined ? error : new ListenFailure('--metrics-listen', 'DISPATCH_METRICS_LISTEN', listen, error);
      });
    }
    if (ctx.options.redisUrl) {
      const url = ctx.options.redisUrl;
      const sharedLimits = sharedStatsLimitsFromEnv(process.env);
      relay = createRedisRelay({ bus, logger, connect: namedConnector(url, 'events', { queueWhileDown: true, logger }) });
      shared = createSharedToolStats({ local: stats, live, logger, connect: () => connectRedis(url, { commandTimeoutMs: config.limits.storeTimeoutMs, name: 'stats' }), ...sharedLimits });
    }
  } catch (error) {
    await metrics?.shutdown();
    await tracing.shutdown();
    throw error;
  }
  const observer = createEventObserver({
    bus,
    tracer: tracing.tracer,
    debugPayloads: settings.debugPayloads,
    logger,
    onCall: (summary: CallSummary) => {
      stats.record(summary);
      shared?.record(summary);
      metrics?.recordCall(summary);
    },
    onAttempt: metrics?.recordAttempt,
    onBreaker: (tool, state) => observed.observe(tool, state),
  });
  return {
    name: 'observability',
    observer,
    handlers: {
      dispatch: { subscribe: subscribeHandler({ bus, authenticate: ctx.authenticate, logger }) },
      registry: { getToolStats: toolStatsHandler({ stats, shared, registry: () => registry, health: () => health, authenticate: ctx.authenticate, logger, maxResponseBytes: config.limits.maxResponseBytes }) },
    },
    attach(deps) {
      registry = deps.registry;
      slots = deps.guards.slots;
      rates = deps.guards.rates;
      storeUp = deps.store.connected;
      observer.setToolLookup((tenant, tool) => deps.registry.lookup(tenant, tool));
      bus.setVisibility((tenant, tool) => deps.registry.lookup(tenant, tool) !== undefined);
      if (isHealthSource(deps.guards.breaker)) health = deps.guards.breaker;
      // A removed tool's counts go with it (here, and its fields in the shared hash: every replica
      // deletes them), so that removing and registering names does not grow them without bound;
      // its metrics' series too, their label pair given back to the cap and its tenant's quota.
      // An operator's tool (tenant "") is counted under each calling tenant: its counts stay (unlisted).
      deps.registry.onRemoved((tenant, tool) => {
        if (tenant === '') return;
        stats.forget(tenant, tool);
        void shared?.forget(tenant, tool);
        metrics?.forgetTool(tenant, tool);
      });
      // An erased tenant's, every tool's (the config file's too) and every pair's: its name leaves them.
      deps.store.onTenantErased((tenant) => {
        stats.forget(tenant);
        void shared?.forget(tenant);
        metrics?.forgetTenant(tenant);
      });
    },
    started(server) {
      turns = () => server.turns;
      server.draining.addEventListener('abort', () => closeAfterTurns(bus, server.turns), { once: true });
    },
    // Each bounded (the relay and the tool stats by the store timeout, the trace flush by
    // SHUTDOWN_FLUSH_MS) and independent of the others: together, so that their waits on a Redis or
    // a collector that does not answer overlap.
    async close() {
      bus.close();
      await allClosed([relay?.close(), shared?.close(), metrics?.shutdown(), tracing.shutdown()]);
    },
  };
}

/** How long subscribers wait at the drain for the turns still running to unwind (forceShutdown comes 200 ms after the grace). */
const UNWIND_WAIT_MS = 150;

/**
 * Ends the subscribers once the turns still on this replica have unwound, so that their last
 * events (a shutdown's APPROVAL_RESOLVED, TOOL_POST, TURN_END) reach them, or after UNWIND_WAIT_MS:
 * turns that go on longer (a shared store's drain lets them finish) end their streams as before.
 */
function closeAfterTurns(bus: { close(): void }, turns: TurnCounts): void {
  const started = Date.now();
  const check = setInterval(() => {
    if (turns.inFlight > 0 && Date.now() - started < UNWIND_WAIT_MS) return;
    clearInterval(check);
    bus.close();
  }, 10);
  check.unref();
}
