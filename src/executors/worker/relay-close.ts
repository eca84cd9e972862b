import { endUnconnected, type RedisClient, type RedisConnector } from '../../store/redis';

/** The relay's connections (its own and its subscriber's), so that close can end those Redis took away. */
export interface RelayClients {
  /** Connects as `connect` does, and keeps the connection until it ends. */
  connect: RedisConnector;
  /**
   * Ends at once every connection that is not connected (Redis away): resolves once they have
   * ended, which stops their reconnection and the timers on them. Called before their QUIT, which
   * leaves a connected one as it is.
   */
  endUnconnected(): Promise<void>;
}

/**
 * Tracks the connections `connect` makes, so that close ends at once those Redis took away (see
 * the store's endUnconnected: QUIT on a reconnecting connection left a 2 s timer and the
 * connection never ended). Also why close does so before sending anything: a QUIT behind commands
 * queued meanwhile waited a further second before it was dropped.
 */
export function trackClients(connect: RedisConnector): RelayClients {
  const clients = new Set<RedisClient>();
  return {
    connect(purpose) {
      const client = connect(purpose);
      clients.add(client);
      client.once('end', () => clients.delete(client));
      return client;
    },
    endUnconnected() {
      return Promise.all([...clients].map(endUnconnected)).then(() => undefined);
    },
  };
}
