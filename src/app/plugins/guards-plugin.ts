import { createApprovalsRelay, createGuards, createSlotWakeups, parsePolicies, approvalHandlers, startupWarnings, watchFallbackNames, type ApprovalsRelay, type GuardsOptions } from '../../guards';
import { closeWithin, connectRedis, namedConnector, type RedisClient } from '../../store/redis';
import { createGuardMiddleware, type GuardMiddlewareOptions } from '../../middleware';
import { breakerKey } from '../../pipeline';
import type { Authenticator } from '../../server';
import type { PluginFactory } from '../plugin';
import { allClosed } from '../close-app';

/**
 * How long start-up waits for the shared caps' connection to Redis (after the store's, up to 5 s):
 * a call made before it is ready falls back to this replica's own cap or limit, as while Redis
 * fails. Redis away, the start goes on after this (the store has warned).
 */
const SLOTS_WAIT_MS = 1_000;

/**
 * Resolves once `client` is ready, or after `ms`. Not whenReady: the store's connection, same URL
 * and user, has had its ACL checked (the start stops on a refusal), and whenReady would have this
 * connection check it again at each reconnection and log the same refusals twice.
 */
function readyWithin(client: RedisClient, ms: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    client.on('ready', done);
  });
}

/** What a test or an embedding may set beyond the configuration file. */
export type GuardsPluginOptions = Omit<GuardsOptions, 'policies' | 'approvalTimeoutMs' | 'singleTenant' | 'observer' | 'logger'> &
  GuardMiddlewareOptions & {
    /** With Redis, this replica's lease on the approvals it lists elsewhere (ApprovalsRelayOptions.leaseMs). */
    readonly approvalsLeaseMs?: number;
  };

/**
 * Loop detection's thresholds live in the pipeline; this plugin adds the rest of issue 4: the
 * `policies:` section (rules, policy endpoint, breaker settings, post-tool notes), breakers,
 * approvals with the ResolveApproval and ListApprovals RPCs, recovery, and the redaction, result verification and
 * memoize middleware, in that order.
 */
export function createGuardsPlugin(options: GuardsPluginOptions = {}): PluginFactory {
  return async (ctx) => {
    const policies = parsePolicies(ctx.config.policies, ctx.config.file);
    // Likely mistakes the file is still valid with (a match fitting no tool, a fallback never taken).
    for (const warning of startupWarnings(ctx.config)) ctx.logger.warn(warning.message, { file: ctx.config.file, ...warning.fields });
    const redisUrl = ctx.options.redisUrl;
    // Shared concurrency caps and rate limits keep their state in Redis, on a connection that fails
    // fast (a call falls back to this replica's own slots or limit rather than wait for Redis).
    const slotsRedis = redisUrl && [...policies.concurrency, ...policies.rates].some((c) => c.shared) ? connectRedis(redisUrl, { commandTimeoutMs: ctx.config.limits.storeTimeoutMs, logger: ctx.logger, name: 'slots' }) : undefined;
    // Awaited before the plugin is done, the rest of its building meanwhile.
    const slotsReady = slotsRedis && readyWithin(slotsRedis, SLOTS_WAIT_MS);
    // Waiting calls hear the slots given back on any replica (connections opened at the first wait).
    const wakeups = slotsRedis && redisUrl ? createSlotWakeups({ connect: namedConnector(redisUrl, 'slot-wakeups', { queueWhileDown: true, logger: ctx.logger }), logger: ctx.logger }) : undefined;
    const sharedSlots = slotsRedis ? { redis: slotsRedis, timeoutMs: ctx.config.limits.storeTimeoutMs, wakeups, logger: ctx.logger } : undefined;
    const set = createGuards({ ...options, policies, approvalTimeoutMs: ctx.config.limits.approvalTimeoutMs, singleTenant: ctx.singleTenant, observer: () => ctx.observer(), logger: ctx.logger, sharedSlots });
    // The config's `redaction:` bounds of the redaction thread; an embedding's options win key by key.
    const redactionWorker = { ...ctx.config.redaction, ...options.redactionWorker };
    const middleware = createGuardMiddleware({ redaction: options.redaction, redactionWorker, memoize: options.memoize });
    // Late-bound: the auth plugin's authenticator is known only once every plugin is built.
    const authenticate: Authenticator = (call, scope) => ctx.authenticate()(call, scope);
    // With Redis, ResolveApproval may land on any replica: decisions travel to the one that waits.
    const relay: ApprovalsRelay | undefined = redisUrl
      ? createApprovalsRelay({ approvals: set.approvals, connect: namedConnector(redisUrl, 'approvals', { queueWhileDown: true, logger: ctx.logger }), logger: ctx.logger, leaseMs: options.approvalsLeaseMs })
      : undefined;
    const resolve = relay ? relay.resolve : set.approvals.resolve.bind(set.approvals);
    const list = relay ? relay.list : set.approvals.list.bind(set.approvals);
    await slotsReady;
    return {
      name: 'guards',
      // A read the memo cache answers takes no concurrency slot and no rate turn.
      guards: { ...set.guards, memo: middleware.cache },
      middleware: middleware.stages.map((stage) => stage.middleware),
      handlers: { dispatch: approvalHandlers(set.approvals, authenticate, ctx.logger, () => resolve, { listWith: () => list, maxResponseBytes: ctx.config.limits.maxResponseBytes }) },
      // Memoized results are the session's (their key holds it): they end with it, on every replica;
      // a write drops the reads of its resource on every replica too.
      attach(deps) {
        const { store } = deps;
        // A removed tool's breaker goes with it (one not closed is told closed: BREAKER_STATE): the
        // name registered again (another URL, say) starts closed. RemoveTool's removal is written to
        // Redis first, and the tool stays when that fails: the breaker goes once the removal has
        // happened here (onRemoved: here, or applied from another replica), and only then. A
        // replacement keeps it.
        deps.registry.onRemoved((tenant, name) => set.breakers.forget(breakerKey({ tenant, name })));
        // A fallback_tool left naming no tool by a change at runtime (start-up's are warned of above).
        watchFallbackNames(deps.registry, ctx.logger);
        store.onSessionEnd((scope) => middleware.cache.endSession(scope));
        store.onWriteAnnounced?.((resource) => void middleware.cache.evictResource(resource));
        // Those missed while the subscription was down: any memoized read may be stale.
        store.onAnnouncementsMissed?.(() => middleware.cache.forgetAll());
        if (store.announceWrite) middleware.announceWrites((resource) => store.announceWrite!(resource));
      },
      // Three connections to Redis, each closed within its bound, and the redaction worker's thread
      // (as the schema compiler's is): together, so their waits overlap.
      async close() {
        await allClosed([relay?.close(), wakeups?.close(), slotsRedis && closeWithin(slotsRedis, 1_000), middleware.close()]);
        set.close();
        middleware.cache.clear();
      },
    };
  };
}

/** Loop detection, breakers, hooks and policies, recovery and middleware (issue 4). */
export const guardsPlugin: PluginFactory = createGuardsPlugin();
