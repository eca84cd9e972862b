import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An HTTP server answering `GET /metrics`. */
export interface MetricsServer {
  /** The bound port (useful with port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** Splits `HOST:PORT` (`[::1]:9464` for IPv6); throws a one-line message when malformed. */
export function parseHostPort(listen: string): { readonly host: string; readonly port: number } {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(listen);
  const port = Number(match?.[2]);
  if (!match || port > 65_535) throw new Error(`--metrics-listen must be HOST:PORT, got ${JSON.stringify(listen)}`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

/** Options of {@link startMetricsServer}. */
export interface MetricsServerOptions {
  /** Connections held at once; further ones are closed as they come. @default unbounded */
  readonly maxConnections?: number;
}

/** How long a client may take to send its request headers, in milliseconds: a held connection is one a scrape cannot have. */
const HEADERS_TIMEOUT_MS = 10_000;

/** Serves `handler` on `/metrics` at `listen`; every other path is 404. */
export async function startMetricsServer(listen: string, handler: (request: IncomingMessage, response: ServerResponse) => void, options: MetricsServerOptions = {}): Promise<MetricsServer> {
  const { host, port } = parseHostPort(listen);
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found; metrics are on GET /metrics\n');
      return;
    }
    handler(request, response);
  });
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = HEADERS_TIMEOUT_MS;
  if (options.maxConnections !== undefined) server.maxConnections = options.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
