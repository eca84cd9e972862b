import type { Callback, Redis } from 'ioredis';

/** What ioredis 6's connectors show of their socket and failover detector (internal: checked before use). */
interface Connector {
  stream?: { readonly destroyed: boolean };
  /** Set by connect(), cleared by disconnect(): a master lookup under way gives up when it finds it cleared. */
  connecting?: boolean;
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
 * - The detector's disconnect (on +switch-master) while the client was reconnecting, its master
 *   lookup under way, ended the client for good: the lookup found the connector closed, and
 *   ioredis ended the client (status 'end', no reconnection). The lookup goes on instead.
 * - A detector is cleaned up when a failover disconnects the client, and again when the client,
 *   reconnected, replaces it, its sockets closed by then: the connector forgets a detector it
 *   cleaned up.
 */
export function closeFailoverDetector(client: Redis): void {
  const connector = (client as unknown as { connector?: Connector }).connector;
  if (connector && 'failoverDetector' in connector && typeof connector.disconnect === 'function') {
    const disconnect = connector.disconnect.bind(connector);
    connector.disconnect = () => {
      // Not the client's own close (it sets manuallyClosing first): the detector's, on
      // +switch-master. The client may be reconnecting then, its master lookup under way: told
      // the connection closed, that lookup ended the client for good (status 'end', every later
      // command refused) where the failover asked only for a new connection. It goes on instead.
      const goOn = connector.connecting === true && (client as unknown as { manuallyClosing?: boolean }).manuallyClosing !== true;
      forgetClosedSocket(connector);
      for (const sentinel of connector.failoverDetector?.sentinels ?? []) forgetClosedSocket(sentinel.client?.connector);
      disconnect();
      connector.failoverDetector = null;
      if (goOn) connector.connecting = true;
    };
  }
  const quit = client.quit.bind(client);
  client.quit = (...args: [callback?: Callback<'OK'>]) => {
    const reply = quit(...args);
    client.disconnect();
    return reply;
  };
}
