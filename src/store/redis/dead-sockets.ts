import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './connect';

/**
 * Drops a connection that has had commands waiting for `deadMs` without a byte from Redis, so the
 * client reconnects (a new connection, to where the URL or Sentinel now points). A Redis that went
 * away without closing its connections (its host or pod gone, a network partition: a half-open
 * connection, which not even a FIN leaves) would otherwise hold it until the kernel gives up on
 * the unacknowledged data, about 15 minutes on Linux: TCP keep-alive probes only idle connections,
 * and a command timeout fails the command but keeps the connection. Every call would fail with
 * STORE_UNAVAILABLE until then.
 *
 * Checked every quarter of `deadMs` by reading each connection's byte count: no listener or timer
 * per command (ioredis's own `socketTimeout` arms a timer and a listener per read, 3-6 µs per call
 * at 64 calls in flight). A connection is dropped when commands were waiting at two checks at
 * least `deadMs` apart and no byte came in between: a reply would have. A Redis that is merely
 * stopped is dropped too, and reconnected to once it answers again. The commands waiting fail
 * (or, on a connection that queues while Redis is away, are sent again on the new one).
 *
 * Returns a function that stops the watch; it also stops when the client ends.
 */
export function dropDeadSockets(client: RedisClient, deadMs: number): () => void {
  // Per connection: its socket, the bytes it had read, and since when commands waited without a byte.
  const watched = new WeakMap<Redis, { stream: Redis['stream']; bytes: number; since: number }>();
  const check = (node: Redis, now: number) => {
    const stream = node.stream as Redis['stream'] | undefined;
    if (node.status !== 'ready' || !stream || node.commandQueue.length === 0) return void watched.delete(node);
    const seen = watched.get(node);
    if (!seen || seen.stream !== stream || seen.bytes !== stream.bytesRead) {
      watched.set(node, { stream, bytes: stream.bytesRead, since: now });
      return;
    }
    if (now - seen.since < deadMs) return;
    watched.delete(node);
    stream.destroy(new Error(`no reply from redis in ${deadMs} ms with commands waiting: connection dropped (half-open or stalled), reconnecting`));
  };
  const timer = setInterval(() => {
    const now = performance.now();
    if (client instanceof Cluster) for (const node of client.nodes('all')) check(node, now);
    else check(client, now);
  }, Math.max(1, Math.floor(deadMs / 4)));
  timer.unref();
  const stop = () => clearInterval(timer);
  client.once('end', stop);
  return stop;
}
