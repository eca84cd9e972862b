import Redis from 'ioredis';
import type { RedisClient } from './connect';

/**
 * Coalesces the commands issued in one tick into one socket write while others are in flight:
 * ioredis writes each command to the socket on its own, a system call each, which measured as
 * most of the Redis store's CPU under load. When the client already waits for replies, the
 * socket is corked until the end of the tick, so the commands that the other calls of this tick
 * issue go out in one write; with nothing in flight (one call at a time) a command is written at
 * once, as a deferred write would only add latency. ioredis's own auto-pipelining measured worse
 * under both loads. Cluster clients (a connection per node) are left as they are.
 */
export function batchWrites(client: RedisClient): () => void {
  if (!(client instanceof Redis)) return () => undefined;
  const uncork = (stream: typeof client.stream) => stream.uncork();
  return () => {
    const stream = client.stream;
    if (client.status !== 'ready' || client.commandQueue.length === 0 || stream.writableCorked > 0) return;
    stream.cork();
    process.nextTick(uncork, stream);
  };
}
