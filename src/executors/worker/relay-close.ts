import { Redis } from 'ioredis';
import type { RedisClient } from '../../store/redis';

/** How long a connection being made is waited for to end once its socket is destroyed, in ms. */
const END_WAIT_MS = 250;

/** The relay's connections (its own and its subscriber's), so that close can end those Redis took away. */
export interface RelayClients {
  /** Connects as `connect` does, and keeps the connection until it ends. */
  connect(): RedisClient;
  /**
   * Ends at once every connection that is not connected (Redis away): resolves once they have
   * ended, which stops their reconnection and the timers on them. Called before their QUIT, which
   * leaves a connected one as it is.
   */
  endUnconnected(): Promise<void>;
}

/**
 * Tracks the connections `connect` makes. Why: with Redis gone, QUIT on a reconnecting ioredis
 * connection (6.0) calls disconnect(), which waits for a 'close' of a socket that closed already:
 * a 2 s timer (`disconnectTimeout`) held the process after the app had closed (jest: "A worker
 * process has failed to exit gracefully"), and the connection never ended, so its dead-socket
 * check ran on. A QUIT behind commands queued meanwhile waited a further second before it was
 * dropped.
 */
export function trackClients(connect: () => RedisClient): RelayClients {
  const clients = new Set<RedisClient>();
  return {
    connect() {
      const client = connect();
      clients.add(client);
      client.once('end', () => clients.delete(client));
      return client;
    },
    endUnconnected() {
      return Promise.all([...clients].map(endUnconnected)).then(() => undefined);
    },
  };
}

/** Ends a standalone (or Sentinel) connection that is not connected; a Cluster's are left to its QUIT. */
async function endUnconnected(client: RedisClient): Promise<void> {
  if (!(client instanceof Redis)) return;
  // A try just begun makes its socket on the next tick: until then ioredis holds the closed one.
  if (client.status === 'connecting' && client.stream?.destroyed) await new Promise((resolve) => setImmediate(resolve));
  if (client.status === 'ready' || client.status === 'end') return;
  const ended = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, END_WAIT_MS);
    client.once('end', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  if (client.status === 'reconnecting' || client.status === 'close') {
    // No socket (it closed, the next try not begun): ioredis ends a connection in this state, as
    // one never connected ('wait'), at once, without waiting for a socket to close.
    client.status = 'wait';
    client.disconnect();
  } else {
    // A socket being connected (or handshaking): destroyed, it closes, and the connection ends.
    client.disconnect();
    client.stream?.destroy();
  }
  await ended;
}
