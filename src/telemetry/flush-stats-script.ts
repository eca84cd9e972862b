import type { Result } from 'ioredis';
import type { RedisClient } from '../store/redis';
import { readScript } from '../store/redis/scripts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /**
     * Adds one replica's sealed batch of a tenant's counts, all-time and in the window hash's
     * bucket current by Redis' TIME; resolves [1, width], or [0, width] when the batch was applied
     * before (a resend after a lost reply). See src/store/redis/flush-stats.lua for keys and arguments.
     */
    dispatchFlushStats(counts: string, flushed: string, width: string, window: string, seq: number, ttlSeconds: number, flushedTtlSeconds: number, maxFields: number, bucketSeconds: number, keptBuckets: number, ...toolsAndDeltas: string[]): Result<[number, number], Context>;
  }
}

/** Defines `dispatchFlushStats` on a client (ioredis sends EVALSHA, EVAL the first time). */
export function defineFlushStats(client: RedisClient): void {
  client.defineCommand('dispatchFlushStats', { lua: readScript('flush-stats.lua'), numberOfKeys: 4 });
}
