import type { Result } from 'ioredis';
import type { RedisClient } from '../store/redis';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /**
     * Adds one replica's sealed batch of a tenant's counts; resolves 1, or 0 when the batch was
     * applied before (a resend after a lost reply). See FLUSH_STATS_LUA for keys and arguments.
     */
    dispatchFlushStats(counts: string, flushed: string, seq: number, ttlSeconds: number, flushedTtlSeconds: number, ...fieldsAndDeltas: string[]): Result<number, Context>;
  }
}

/**
 * KEYS: the tenant's counts hash, this replica's last applied sequence number for the tenant.
 * ARGV: the batch's sequence number, the hash's TTL (s), the sequence number's TTL (s), then
 * `field, delta` pairs. The script is kept here rather than in a .lua file because the build
 * copies only src/store/redis/*.lua into dist/.
 */
export const FLUSH_STATS_LUA = `
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
for i = 4, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
return 1
`;

/** Defines `dispatchFlushStats` on a client (ioredis sends EVALSHA, EVAL the first time). */
export function defineFlushStats(client: RedisClient): void {
  client.defineCommand('dispatchFlushStats', { lua: FLUSH_STATS_LUA, numberOfKeys: 2 });
}
