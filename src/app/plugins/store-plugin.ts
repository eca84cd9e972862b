import { checkRedisSettings, connectRedis, createRedisStore, createRegistryReplica, whenReady } from '../../store/redis';
import type { Plugin, PluginContext } from '../plugin';

/** How long start-up waits for Redis before serving anyway (the store recovers when it comes). */
const CONNECT_WAIT_MS = 5000;

/**
 * The shared store: in-memory unless a Redis URL is given. With Redis, the tools registered by
 * RPC live there too, so replicas sharing it share them.
 */
export async function storePlugin(ctx: PluginContext): Promise<Plugin> {
  const url = ctx.options.redisUrl;
  if (!url) return { name: 'store' };
  const { logger } = ctx;
  const timeoutMs = ctx.config.limits.storeTimeoutMs;
  const client = connectRedis(url, { commandTimeoutMs: timeoutMs, logger, name: 'store' });
  // Settings that would lose idempotency records (eviction, no append-only file) are logged.
  checkRedisSettings(client, logger);
  if (!(await whenReady(client, CONNECT_WAIT_MS))) logger.warn('redis is not reachable yet; side-effecting calls fail with STORE_UNAVAILABLE until it is', { waitedMs: CONNECT_WAIT_MS });
  // The subscription hears the sessions other replicas end, to drop their memoized results here.
  // `connected` feeds the dispatch_store_up gauge: a Redis gone is otherwise seen only in the calls it fails.
  const store = Object.assign(createRedisStore(client, { ...ctx.config.redisSpill, timeoutMs, logger, connectSubscriber: () => connectRedis(url, { queueWhileDown: true, logger, name: 'store-subscriber' }) }), { connected: () => client.status === 'ready' });
  // A stalled master's announcement fails within the store's bound, as every command of `client` does.
  const replica = createRegistryReplica(client, () => connectRedis(url, { queueWhileDown: true, name: 'registry-subscriber' }), { logger, publishStallMs: timeoutMs });
  let attached = false;
  return {
    name: 'store',
    store,
    attach(deps) {
      attached = true;
      return replica.attach(deps.registry);
    },
    async close() {
      await replica.close();
      // Once attached, the app closes the store itself; before that (a failed start) nobody else will.
      if (!attached) await store.close();
    },
  };
}
