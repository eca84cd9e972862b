import type { Callback, Redis } from 'ioredis';

/** What ioredis 6's connectors show of their socket and failover detector (internal: checked before use). */
interface Connector {
  stream?: { readonly destroyed: boolean };
  failoverDetector?: { readonly sentinels?: ReadonlyArray<{ readonly client?: { readonly connector?: Connector } }> } | null;
  disconnect?: () => void;
}

/** Ending a socket already closed would leave a 2 s timer (to destroy it): the connector forgets it instead. */
function forgetClosedSocket(connector: Connector | undefined): void {
  if (connector?.stream?.destroyed === true) connector.stream = undefined;
}

/**
 * Makes closing a Sentinel client with `failoverDetector` leave nothing behind:
 *
 * - ioredis's quit() ends the master's connection but not the detector's subscriptions to the
 *   Sentinels (only disconnect() ends them, redis/ioredis#1362). So disconnect() follows QUIT at
 *   once: the socket is ended after QUIT is written and read until Redis closes it, so every
 *   command sent before QUIT is still answered, and the detector's connections end with it.
 * - ioredis ends a connector's socket with a 2 s timer to destroy it, cleared when it closes: one
 *   already closed (the master lost, QUIT answered, a Sentinel gone) never clears it, and the
 *   process cannot exit until it fires. Such a socket is forgotten instead of ended.
 * - A detector is cleaned up when a failover disconnects the client, and again when the client,
 *   reconnected, replaces it, its sockets closed by then: the connector forgets a detector it
 *   cleaned up.
 */
export function closeFailoverDetector(client: Redis): void {
  const connector = (client as unknown as { connector?: Connector }).connector;
  if (connector && 'failoverDetector' in connector && typeof connector.disconnect === 'function') {
    const disconnect = connector.disconnect.bind(connector);
    connector.disconnect = () => {
      forgetClosedSocket(connector);
      for (const sentinel of connector.failoverDetector?.sentinels ?? []) forgetClosedSocket(sentinel.client?.connector);
      disconnect();
      connector.failoverDetector = null;
    };
  }
  const quit = client.quit.bind(client);
  client.quit = (...args: [callback?: Callback<'OK'>]) => {
    const reply = quit(...args);
    client.disconnect();
    return reply;
  };
}
