import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';

/** A loopback TCP proxy to a local port, that tests can cut. */
export interface TcpProxy {
  readonly port: number;
  /** Destroys every connection and refuses new ones until `restore`. */
  cut(): void;
  restore(): void;
  /** From now on, destroys a connection as soon as its client sends bytes that `predicate` accepts (before they reach the server). */
  cutWhenClientSends(predicate: ((chunk: Buffer) => boolean) | undefined): void;
  /**
   * Stops forwarding on the connections open now, both ways, without closing them: what a network
   * partition leaves (a half-open connection; not even a FIN gets through). New connections work.
   */
  freeze(): void;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 port 0 to `port` on 127.0.0.1. */
export async function startTcpProxy(port: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  // Each connection's two sockets, for freeze.
  const pairs: [Socket, Socket][] = [];
  let open = true;
  let cutOn: ((chunk: Buffer) => boolean) | undefined;
  let accepted = 0;
  const server: Server = createServer((client) => {
    if (!open) return void client.destroy();
    accepted++;
    const upstream = tcpConnect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (chunk: Buffer) => {
      if (cutOn?.(chunk)) {
        client.destroy();
        upstream.destroy();
      } else upstream.write(chunk);
    });
    upstream.pipe(client);
    pairs.push([client, upstream]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    open = false;
    for (const s of sockets) s.destroy();
  };
  return {
    port: (server.address() as { port: number }).port,
    cut,
    restore: () => void (open = true),
    cutWhenClientSends: (predicate) => void (cutOn = predicate),
    freeze() {
      for (const [client, upstream] of pairs.splice(0)) {
        upstream.unpipe(client);
        // Neither side is read again, so neither sees the other's data or FIN.
        client.pause();
        upstream.pause();
        client.removeAllListeners('data');
        upstream.removeAllListeners('data');
      }
    },
    connections: () => accepted,
    close: () => new Promise((resolve) => (cut(), server.close(() => resolve()))),
  };
}
