import { randomBytes } from 'node:crypto';
import { Redis, ReplyError } from 'ioredis';
import type { CallSummary } from '../events';
import type { Logger } from '../log';
import { dropConnections, type RedisClient } from '../store/redis';
import { defineFlushStats } from './flush-stats-script';
import { createPendingDeltas, type SealedDeltas } from './pending-deltas';
import { resolveSharedStatsLimits, type SharedStatsLimits } from './shared-stats-options';
import { bucketOf, RATE_WINDOW_BUCKETS, windowBuckets } from './rate-window';
import { addTools, countFields, FIELDS_PER_TOOL, parseCounts, statsKeys, toolFields, windowKey } from './stats-hash';
import { tenantCounts, tenantShare, type ToolCounters, type ToolStats, type ToolStatsReader } from './tool-stats';

/** What {@link createSharedToolStats} needs besides its limits. */
export interface SharedToolStatsOptions extends SharedStatsLimits {
  /** This replica's own counts, recorded by the caller: the answer while Redis is unreachable. */
  readonly local: ToolStats;
  /** Opens the connection the shared counts own; its commands must fail fast while Redis is away. */
  readonly connect: () => RedisClient;
  readonly logger: Logger;
}

/** Tool counts of every replica sharing one Redis, read per tenant for GetToolStats. */
export interface SharedToolStats extends ToolStatsReader {
  /** Adds a finished call to the counts waiting for the next flush; never waits. */
  record(summary: CallSummary): void;
  /**
   * Drops a removed tool's counts waiting for Redis, then deletes its fields from the tenant's hash
   * and its rate window's buckets (HDELs in one transaction) once the flush out, if any, is done. Every replica does, the one that removed
   * it and those that hear of it: a flush of this one that landed before it heard (its reply in
   * first) is deleted too. Never rejects.
   */
  forget(tenant: string, tool: string): Promise<void>;
  /** Sends the waiting counts now (a timer does it every `flushIntervalMs`); never rejects. */
  flush(): Promise<void>;
  /**
   * Stops the timer, sends what waits and closes the connection: within twice the command timeout
   * (a flush still out, then the last one), once when Redis does not answer.
   */
  close(): Promise<void>;
}

/** What an answer from this replica's counts alone says to the client. */
export const UNREACHABLE_WARNING = 'redis is unreachable: the counts cover only the calls of the replica that answered';

type FlushArgs = Parameters<RedisClient['dispatchFlushStats']>;

/**
 * Shares the per-(tenant, tool) counts through Redis. A call only adds to this replica's pending
 * counts; every `flushIntervalMs` they are sealed per tenant and added with one script per tenant
 * (HINCRBY into `dispatch:stats:{tenant}`, TTL refreshed, and into the hash of the rate window's
 * bucket it was sealed in, `dispatch:stats:{tenant}:w<bucketMs>:<bucket>`, which expires once the
 * bucket has left the window), in one pipeline. A batch that fails is
 * sent again unchanged, and counts once even if an earlier send did reach Redis. A read takes the
 * tenant's hash and adds what this replica holds that Redis has not applied; with Redis away it
 * answers from `local` with a warning.
 */
export function createSharedToolStats(options: SharedToolStatsOptions): SharedToolStats {
  const limits = resolveSharedStatsLimits(options);
  const { local, logger } = options;
  const client = options.connect();
  defineFlushStats(client);
  const replica = randomBytes(8).toString('hex');
  const keysOf = (tenant: string) => statsKeys(tenant, replica, limits.keyPrefix);
  const { window } = local;
  const bucketTtlMs = (RATE_WINDOW_BUCKETS + 1) * window.bucketMs;
  const deltas = createPendingDeltas(limits.maxPendingPairs, tenantShare(limits.maxPendingPairs), () => bucketOf(window));
  const outage = outageLog(logger);
  let dropped = 0;
  let flushing: Promise<void> | undefined;
  /** The last flush got no answer from Redis (away, or not answering within the command timeout). */
  let unanswered = false;

  const argsOf = (batch: SealedDeltas): FlushArgs => {
    const keys = keysOf(batch.tenant);
    const bucket = windowKey(keys.counts, window.bucketMs, batch.bucket);
    return [keys.counts, keys.flushed, bucket, batch.seq, limits.ttlSeconds, limits.flushedTtlSeconds, limits.maxToolsPerTenant * FIELDS_PER_TOOL, bucketTtlMs, ...countFields(batch.tools)];
  };

  async function flushOnce(): Promise<void> {
    const batches = deltas.seal();
    if (batches.length === 0) return;
    const errors = await sendAll(client, batches.map(argsOf));
    let failure: Error | undefined;
    errors.forEach((error, i) => (error ? (failure = error) : deltas.settle(batches[i]!)));
    // An error reply is an answer: Redis is there, and the next flush may well go through.
    unanswered = errors.some((error) => error !== undefined && !(error instanceof ReplyError));
    if (failure) return outage.down('flush', failure, deltas.pairs);
    outage.up();
    if (dropped > 0) logger.warn('shared tool stats: calls left out while the pending counts were full', { dropped, maxPendingPairs: limits.maxPendingPairs });
    dropped = 0;
  }

  const flush = () => {
    flushing ??= flushOnce()
      .catch((error: unknown) => {
        unanswered = !(error instanceof ReplyError);
        outage.down('flush', error, deltas.pairs);
      })
      .finally(() => (flushing = undefined));
    return flushing;
  };
  const timer = setInterval(flush, limits.flushIntervalMs);
  timer.unref();

  return {
    record(summary) {
      if (deltas.add(summary)) return;
      if (dropped++ === 0) logger.warn('shared tool stats: too many counts wait for redis; calls of further (tenant, tool) pairs are left out', { maxPendingPairs: limits.maxPendingPairs });
    },
    async read(tenant) {
      const keys = keysOf(tenant);
      const held = deltas.held(tenant);
      try {
        const transaction = client.multi().hgetall(keys.counts).get(keys.flushed);
        for (const bucket of windowBuckets(window)) transaction.hgetall(windowKey(keys.counts, window.bucketMs, bucket));
        const replies = await transaction.exec();
        const [counts, flushed, ...buckets] = (replies ?? []).map(([error, value]) => {
          if (error) throw error;
          return value;
        });
        if (counts === undefined) throw new Error('the read transaction was aborted');
        const tools = parseCounts(counts as Record<string, string>);
        const recent = new Map<string, ToolCounters>();
        for (const hash of buckets) addTools(recent, parseCounts(hash as Record<string, string>));
        // Calls this replica holds are recent: they count in the bucket of the flush that delivers them.
        for (const into of [tools, recent]) {
          addTools(into, held.pending);
          if (held.sealed && Number(flushed ?? 0) < held.sealed.seq) addTools(into, held.sealed.tools);
        }
        outage.up();
        return { tools, recent, scope: 'service' };
      } catch (error) {
        outage.down('read', error, deltas.pairs);
        return { ...tenantCounts(local, tenant), scope: 'replica', warning: UNREACHABLE_WARNING };
      }
    },
    async forget(tenant, tool) {
      deltas.forget(tenant, tool);
      await flushing;
      const { counts } = keysOf(tenant);
      const transaction = client.multi().hdel(counts, ...toolFields(tool));
      for (const bucket of windowBuckets(window)) transaction.hdel(windowKey(counts, window.bucketMs, bucket), ...toolFields(tool));
      await transaction.exec().then((replies) => {
        const failed = replies?.find(([error]) => error)?.[0];
        if (failed) throw failed;
      }).catch((error: Error) => {
        logger.warn("shared tool stats: could not delete a removed tool's counts; they expire with the tenant's hash", { tenant, tool: tool.slice(0, 256), error: error.message });
      });
    },
    flush,
    async close() {
      clearInterval(timer);
      // A flush still out ends within the command timeout. When Redis did not answer it (away, or
      // stalled), one more would only wait out the timeout again: the counts are lost either way.
      const out = flushing;
      if (out) await out;
      if (!(out && unanswered)) await flush();
      if (deltas.pairs > 0) logger.error('shared tool stats: closed with counts redis never received', { pairs: deltas.pairs });
      // The connection holds nothing Redis must forget (no subscription): one that does not answer
      // is dropped rather than sent a QUIT that would wait out the command timeout once more.
      if (client.status === 'ready' && !unanswered) await client.quit().catch(() => dropConnections(client));
      else dropConnections(client);
    },
  };
}

/**
 * Sends every batch: in one pipeline to a standalone Redis, each on its own to a cluster (which
 * routes it by its tenant's slot). Resolves with each batch's error, undefined when it was applied.
 */
async function sendAll(client: RedisClient, batches: readonly FlushArgs[]): Promise<(Error | undefined)[]> {
  if (client instanceof Redis) {
    const pipeline = client.pipeline();
    for (const args of batches) pipeline.dispatchFlushStats(...args);
    const replies = await pipeline.exec().catch((error: Error) => batches.map(() => [error, null] as const));
    return batches.map((_, i) => (replies?.[i] ? (replies[i][0] ?? undefined) : new Error('the flush pipeline was aborted')));
  }
  const settled = await Promise.allSettled(batches.map((args) => client.dispatchFlushStats(...args)));
  return settled.map((s) => (s.status === 'rejected' ? (s.reason as Error) : undefined));
}

/** Logs when Redis stops answering the shared counts, once, and when it answers again. */
function outageLog(logger: Logger) {
  let down = false;
  return {
    down(what: 'flush' | 'read', error: unknown, heldPairs: number) {
      if (down) return;
      down = true;
      const message = error instanceof Error ? error.message : String(error);
      logger.warn('shared tool stats: redis unreachable; GetToolStats answers from this replica’s counts and counts wait to be flushed', { failed: what, error: message, heldPairs });
    },
    up() {
      if (down) logger.info('shared tool stats: redis reachable again');
      down = false;
    },
  };
}
