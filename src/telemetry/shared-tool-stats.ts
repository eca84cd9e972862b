import { randomBytes } from 'node:crypto';
import { Redis, ReplyError } from 'ioredis';
import type { CallSummary } from '../events';
import type { Logger } from '../log';
import { dropConnections, type RedisClient } from '../store/redis';
import { defineFlushStats } from './flush-stats-script';
import type { LiveTool } from './label-pairs';
import { createPendingDeltas, type SealedDeltas } from './pending-deltas';
import { resolveSharedStatsLimits, type SharedStatsLimits } from './shared-stats-options';
import { MAX_RATE_WINDOW_BUCKETS } from './rate-window';
import { addTools, FIELDS_PER_TOOL, hmgetCounts, packedFields, parseCounts, statsKeys, toolFields, widthKey, windowCounts, windowHashKey } from './stats-hash';
import { sharedWindowReads } from './shared-window-reads';
import { tenantCounts, tenantShare, type ToolCounters, type ToolStats, type ToolStatsReader } from './tool-stats';

/** What {@link createSharedToolStats} needs besides its limits. */
export interface SharedToolStatsOptions extends SharedStatsLimits {
  /** This replica's own counts, recorded by the caller: the answer while Redis is unreachable. */
  readonly local: ToolStats;
  /** Whether a pair's tool is registered now, asked when a call would add a pair to the held counts (countCall). */
  readonly live?: LiveTool;
  /** Opens the connection the shared counts own; its commands must fail fast while Redis is away. */
  readonly connect: () => RedisClient;
  readonly logger: Logger;
  /** How long a read of a tenant's counts from Redis is served again to GetToolStats, in ms. @default 1000 */
  readonly readKeepMs?: number;
}

/** A tenant's counts as Redis held them at a read (shared by the reads that get it: not changed). */
interface Snapshot {
  readonly flushed: number;
  readonly tools: ReadonlyMap<string, Readonly<ToolCounters>>;
  readonly recent: ReadonlyMap<string, Readonly<ToolCounters>>;
}

/** Tool counts of every replica sharing one Redis, read per tenant for GetToolStats. */
export interface SharedToolStats extends ToolStatsReader {
  /** Adds a finished call to the counts waiting for the next flush; never waits. */
  record(summary: CallSummary): void;
  /**
   * Drops a removed tool's counts waiting for Redis, then deletes its fields from the tenant's hash
   * and its window hash (HDELs in one transaction) once the flush out, if any, is done. Every replica does, the one that removed
   * it and those that hear of it: a flush of this one that landed before it heard (its reply in
   * first) is deleted too. Without `tool`, every tool's of the tenant: both hashes deleted
   * (EraseTenant). Never rejects.
   */
  forget(tenant: string, tool?: string): Promise<void>;
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
 * bucket current by Redis' TIME, in `dispatch:stats:{tenant}:window`: a field per tool holding its
 * counts per bucket, at most 60 buckets), in one pipeline. A batch that fails is
 * sent again unchanged, and counts once even if an earlier send did reach Redis. A read (one MULTI: Redis'
 * TIME, the all-time hash and the window hash; only one tool's fields when one is asked) is shared by concurrent GetToolStats and served again for `readKeepMs`, until
 * this replica's next flush of the tenant lands; it adds what this replica holds that Redis has not applied; with Redis away it
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
  const bucketSeconds = window.bucketMs / 1000;
  const deltas = createPendingDeltas(limits.maxPendingPairs, tenantShare(limits.maxPendingPairs), options.live);
  const outage = outageLog(logger);
  let dropped = 0;
  let flushing: Promise<void> | undefined;
  /** The last flush got no answer from Redis (away, or not answering within the command timeout). */
  let unanswered = false;

  const argsOf = (batch: SealedDeltas): FlushArgs => {
    const keys = keysOf(batch.tenant);
    return [keys.counts, keys.flushed, widthKey(keys.counts), windowHashKey(keys.counts), batch.seq, limits.ttlSeconds, limits.flushedTtlSeconds, limits.maxToolsPerTenant * FIELDS_PER_TOOL, bucketSeconds, MAX_RATE_WINDOW_BUCKETS, ...packedFields(batch.tools)];
  };
  const widths = widthWarning(logger, bucketSeconds);

  async function readRedis(tenant: string, tool: string): Promise<Snapshot> {
    const keys = keysOf(tenant);
    const windowed = windowHashKey(keys.counts);
    // One round trip: Redis' clock, the width, this replica's sequence number, the all-time counts
    // and the window hash (one field per tool), or only the asked tool's fields.
    const transaction = client.multi().time().get(widthKey(keys.counts)).get(keys.flushed);
    if (tool === '') transaction.hgetall(keys.counts).hgetall(windowed);
    else transaction.hmget(keys.counts, ...toolFields(tool)).hget(windowed, tool);
    const replies = await transaction.exec();
    const [time, stored, flushed, counts, buckets] = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    if (buckets === undefined) throw new Error('the read transaction was aborted');
    const width = Number(stored) >= 1 ? Number(stored) : bucketSeconds;
    if (stored !== null) widths.check(tenant, width);
    const oldest = Math.floor(Number((time as string[])[0]) / width) - Math.min(Math.ceil(window.seconds / width), MAX_RATE_WINDOW_BUCKETS) + 1;
    const seq = Number(flushed ?? 0);
    if (tool !== '') {
      const all = hmgetCounts(counts as (string | null)[]);
      const recent = windowCounts(buckets as string | null, oldest);
      return { flushed: seq, tools: new Map(all ? [[tool, all]] : []), recent: new Map(recent ? [[tool, recent]] : []) };
    }
    const recent = new Map<string, ToolCounters>();
    for (const [name, value] of Object.entries(buckets as Record<string, string>)) {
      const counters = windowCounts(value, oldest);
      if (counters) recent.set(name, counters);
    }
    return { flushed: seq, tools: parseCounts(counts as Record<string, string>), recent };
  }
  const reads = sharedWindowReads(readRedis, options.readKeepMs ?? 1000);

  async function flushOnce(): Promise<void> {
    const batches = deltas.seal();
    if (batches.length === 0) return;
    const replies = await sendAll(client, batches.map(argsOf));
    let failure: Error | undefined;
    replies.forEach((reply, i) => {
      if (reply instanceof Error) return void (failure = reply);
      deltas.settle(batches[i]!);
      reads.invalidate(batches[i]!.tenant);
      widths.check(batches[i]!.tenant, reply[1]);
    });
    const errors = replies.map((reply) => (reply instanceof Error ? reply : undefined));
    // An error reply is an answer: Redis is there, and the next flush may well go through.
    unanswered = errors.some((error) => error !== undefined && !(error instanceof ReplyError));
    if (failure) {
      reads.clear();
      return outage.down('flush', failure, deltas.pairs);
    }
    outage.up();
    if (dropped > 0) logger.warn('shared tool stats: calls left out while the pending counts were full', { dropped, maxPendingPairs: limits.maxPendingPairs });
    dropped = 0;
  }

  const flush = () => {
    flushing ??= flushOnce()
      .catch((error: unknown) => {
        reads.clear();
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
    async read(tenant, tool = '') {
      // Taken before the read: a batch settled since is in what Redis answers (same connection, in order).
      const held = deltas.held(tenant);
      try {
        const snapshot = await reads.get(tenant, tool);
        const tools = new Map(snapshot.tools);
        const recent = new Map(snapshot.recent);
        // Calls this replica holds are recent: they count in the bucket current when Redis applies them.
        for (const into of [tools, recent]) {
          addTools(into, held.pending);
          if (held.sealed && snapshot.flushed < held.sealed.seq) addTools(into, held.sealed.tools);
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
      // A whole tenant's: its two hashes (one slot: the tenant's hash tag).
      const deletion = tool === undefined ? client.multi().del(counts, windowHashKey(counts)) : client.multi().hdel(counts, ...toolFields(tool)).hdel(windowHashKey(counts), tool);
      await deletion.exec().then((replies) => {
        const failed = replies?.find(([error]) => error)?.[0];
        if (failed) throw failed;
        reads.invalidate(tenant);
      }).catch((error: Error) => {
        logger.warn(`shared tool stats: could not delete ${tool === undefined ? "an erased tenant's" : "a removed tool's"} counts; they expire with the tenant's hash`, { tenant, tool: tool?.slice(0, 256), error: error.message });
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

type FlushReply = [number, number];

/**
 * Sends every batch: in one pipeline to a standalone Redis, each on its own to a cluster (which
 * routes it by its tenant's slot). Resolves with each batch's error, or its reply when it was applied.
 */
async function sendAll(client: RedisClient, batches: readonly FlushArgs[]): Promise<(Error | FlushReply)[]> {
  if (client instanceof Redis) {
    const pipeline = client.pipeline();
    for (const args of batches) pipeline.dispatchFlushStats(...args);
    const replies = await pipeline.exec().catch((error: Error) => batches.map(() => [error, null] as const));
    return batches.map((_, i) => (replies?.[i] ? (replies[i][0] ?? (replies[i][1] as FlushReply)) : new Error('the flush pipeline was aborted')));
  }
  const settled = await Promise.allSettled(batches.map((args) => client.dispatchFlushStats(...args)));
  return settled.map((s) => (s.status === 'rejected' ? (s.reason as Error) : s.value));
}

/** Logs once per width when Redis holds a tenant's buckets in another width than this replica's rate_bucket_seconds. */
function widthWarning(logger: Logger, bucketSeconds: number) {
  const warned = new Set<number>();
  return {
    check(tenant: string, width: number | undefined) {
      if (width === undefined || width === bucketSeconds || warned.has(width) || warned.size >= 16) return;
      warned.add(width);
      logger.warn('shared tool stats: redis holds the rate window in buckets of another width than telemetry.rate_bucket_seconds (set by the first replica to flush); that width is used, replicas should agree', { tenant, redisBucketSeconds: width, rateBucketSeconds: bucketSeconds });
    },
  };
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
