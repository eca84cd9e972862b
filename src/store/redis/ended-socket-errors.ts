import { AbstractConnector } from 'ioredis';

/** What ioredis 6's connectors show of their socket (internal: checked before use). */
interface Connector {
  stream?: { readonly destroyed: boolean; on(event: 'error', listener: () => void): unknown };
  disconnect(): void;
}

const ignore = (): void => undefined;
let installed = false;

/**
 * Makes a socket that ioredis ends while its TLS handshake is under way unable to crash the
 * process. ioredis listens to a socket's first error only (`once`: redis/ioredis#961, closed
 * unmerged). A TLS socket ended before its handshake is done (any disconnect while connecting:
 * ioredis's own, after a cluster's slot read timed out or at a Sentinel failover, or a client
 * closed) whose server then fails the check (a certificate for another name, an unknown CA)
 * emits two errors: the check's, which ioredis takes, then the server's alert ("tlsv1 alert
 * decode error"), which with no listener left was an uncaught exception, and dispatchd exited.
 * Every connector's disconnect now gives the socket it ends a listener that ignores what comes
 * after; the first error still reaches ioredis as before. Patches ioredis's base connector once
 * per process (its Standalone and Sentinel connectors, every connection a Cluster makes).
 */
export function ignoreErrorsOfEndedSockets(): void {
  if (installed) return;
  installed = true;
  const prototype = AbstractConnector.prototype as unknown as Connector;
  const disconnect = prototype.disconnect;
  if (typeof disconnect !== 'function') return;
  prototype.disconnect = function disconnectIgnoringLaterErrors(this: Connector) {
    if (this.stream && !this.stream.destroyed) this.stream.on('error', ignore);
    disconnect.call(this);
  };
}
