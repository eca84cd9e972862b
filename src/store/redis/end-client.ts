import { Cluster, Redis } from 'ioredis';
import type { RedisClient } from './connect';

/** How long a connection being made is waited for to end once its socket is destroyed, in ms. */
const END_WAIT_MS = 250;

/** An ioredis 6 connection's connector (internal: checked before use). */
interface Connector {
  disconnect?: () => void;
}

/**
 * Ends at once a client that is not connected (Redis away), and every connection of it: a
 * connected one is left as it is (for its owner's QUIT). Why: with Redis gone, ioredis 6 ends a
 * reconnecting connection (QUIT, which calls disconnect(), or disconnect()) by ending its socket,
 * closed already (with a 2 s timer to destroy it, which held the process after the app had
 * closed: safeConnectorDisconnect now forgets such a socket), and the connection never reached
 * 'end', so what waits for that (the dead-socket check, its queued commands) ran on. A Cluster
 * client with every node gone, likewise reconnecting, had no node to QUIT and never ended either.
 *
 * Synchronous: a connection with no socket ends before this returns; one with a socket being made
 * ends once it closes, shortly after (see {@link endUnconnected} to wait for it).
 */
export function endNow(client: RedisClient): void {
  if (client instanceof Cluster) endCluster(client);
  else if (client instanceof Redis) endConnection(client);
}

/**
 * Ends `client` as {@link endNow} does, and resolves once it has ended (or after 250 ms, a socket
 * being made that has not closed by then). Resolves at once for a connected client. Never rejects.
 */
export async function endUnconnected(client: RedisClient): Promise<void> {
  if (connected(client) || client.status === 'end') return;
  const ended = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, END_WAIT_MS);
    client.once('end', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  endNow(client);
  // Narrowed by the check above, but endNow may have ended it.
  if ((client.status as string) !== 'end') await ended;
}

/**
 * Ends a client's connections at once whatever their state, half-open ones too: a stalled or
 * cut-off peer would never answer the FIN that `disconnect` sends, and nothing else is to come on
 * them. One not connected is ended as {@link endNow} does.
 */
export function dropConnections(client: RedisClient): void {
  if (!connected(client)) return endNow(client);
  const nodes = client instanceof Cluster ? client.nodes('all') : [client];
  client.disconnect();
  for (const node of nodes) node.stream?.destroy();
}

/** True for a client that reached Redis (a Cluster client also while some of its nodes are away). */
const connected = (client: RedisClient) => client.status === 'ready';

function endConnection(client: Redis): void {
  if (connected(client) || client.status === 'end') return;
  // A try just begun makes its socket on the next tick, which disconnect() stops (the try then
  // ends the connection).
  const connector = (client as unknown as { connector?: Connector }).connector;
  if (client.status === 'reconnecting' || client.status === 'close') {
    // No socket (it closed, the next try not begun). The connector is told first: a Sentinel
    // client's ends its failover detector's connections to the Sentinels. Then ioredis ends the
    // connection as it ends one never connected ('wait'), at once, with no socket to wait for.
    connector?.disconnect?.();
    client.status = 'wait';
    client.disconnect();
  } else {
    // A socket being connected (or handshaking): destroyed, it closes, and the connection ends.
    client.disconnect();
    client.stream?.destroy();
  }
}

function endCluster(client: Cluster): void {
  if (connected(client) || client.status === 'end') return;
  const nodes = client.nodes('all');
  if (client.status === 'reconnecting' || client.status === 'close') {
    // Every node gone (ioredis drops a node it lost): as for a connection, ended as one never connected.
    client.status = 'wait';
  }
  client.disconnect();
  // Nodes being connected (a try under way): their sockets destroyed, they end at once.
  for (const node of nodes) endConnection(node);
}
