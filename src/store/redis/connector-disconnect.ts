import { AbstractConnector } from 'ioredis';

/** What ioredis 6's connectors show of their socket (internal: checked before use). */
interface Connector {
  stream?: { readonly destroyed: boolean; on(event: 'error', listener: () => void): unknown };
  disconnect(): void;
}

const ignore = (): void => undefined;
let installed = false;

/**
 * Makes ioredis's ending of a connection's socket safe, for every connector (its Standalone and
 * Sentinel connectors, every connection a Cluster makes, its own "refresher" ones that ask a node
 * for the slots included): patches ioredis's base connector once per process.
 *
 * - A socket ended while its TLS handshake is under way can no longer crash the process. ioredis
 *   listens to a socket's first error only (`once`: redis/ioredis#961, closed unmerged). A TLS
 *   socket ended before its handshake is done (any disconnect while connecting: ioredis's own,
 *   after a cluster's slot read timed out or at a Sentinel failover, or a client closed) whose
 *   server then fails the check (a certificate for another name, an unknown CA) emits two errors:
 *   the check's, which ioredis takes, then the server's alert ("tlsv1 alert decode error"), which
 *   with no listener left was an uncaught exception, and dispatchd exited. The socket ended now
 *   gets a listener that ignores what comes after; the first error still reaches ioredis.
 * - A socket destroyed already (a refused handshake, a connection Redis closed) is forgotten
 *   instead of ended: ioredis ends it and arms a 2 s timer (`disconnectTimeout`) to destroy it,
 *   cleared by its 'close', which had come already, so the timer held the process for 2 s after
 *   the client ended (a refused Cluster client's refresher connections: the app closed, its
 *   process did not exit).
 */
export function safeConnectorDisconnect(): void {
  if (installed) return;
  installed = true;
  const prototype = AbstractConnector.prototype as unknown as Connector;
  const disconnect = prototype.disconnect;
  if (typeof disconnect !== 'function') return;
  prototype.disconnect = function disconnectSafely(this: Connector) {
    if (this.stream?.destroyed) this.stream = undefined;
    else this.stream?.on('error', ignore);
    disconnect.call(this);
  };
}
