import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';

/** A loopback TCP proxy to a local port, that tests can cut. */
export interface TcpProxy {
  readonly port: number;
  /** Destroys every connection and refuses new ones until `restore`. */
  cut(): void;
  restore(): void;
  /** From now on, destroys a connection as soon as its client sends bytes that `predicate` accepts (before they reach the server). */
  cutWhenClientSends(predicate: ((chunk: Buffer) => boolean) | undefined): void;
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 port 0 to `port` on 127.0.0.1. */
export async function startTcpProxy(port: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let open = true;
  let cutOn: ((chunk: Buffer) => boolean) | undefined;
  const server: Server = createServer((client) => {
    if (!open) return void client.destroy();
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
    close: () => new Promise((resolve) => (cut(), server.close(() => resolve()))),
  };
}
