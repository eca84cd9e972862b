import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { pauseScrapes } from './sliced-text';

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
  /**
   * Connections held at once. A connection past them closes the oldest one with no request in
   * service (idle, or still sending its request), or itself when every one is being answered.
   * @default unbounded
   */
  readonly maxConnections?: number;
}

/**
 * How long a client may take to send its request, in milliseconds (checked every second): a
 * scraper sends its few header lines at once, and the endpoint has no authentication, so a
 * connection holding a half-sent request is closed soon.
 */
const REQUEST_TIMEOUT_MS = 5_000;

/** How long an idle keep-alive connection stays open, in milliseconds; less than any scrape interval, so scrapers reconnect. */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;

/** How long an answer's client may leave its socket full before a new connection past the limit may take its place, in milliseconds. */
const STALLED_MS = 2_000;

/** How long one answer may take to send, in milliseconds, before its connection is closed (a client reading slowly holds a slot). */
const SEND_TIMEOUT_MS = 30_000;

/**
 * Serves `handler` on `/metrics` at `listen`; every other path is 404. The endpoint has no
 * authentication: a held connection is one a scrape cannot have, so half-sent requests time out
 * and give way to new connections past `maxConnections` (eight of them, reopened as they were
 * closed, once made every scrape fail), as do answers their clients have not read for 2 s.
 */
export async function startMetricsServer(listen: string, handler: (request: IncomingMessage, response: ServerResponse) => void, options: MetricsServerOptions = {}): Promise<MetricsServer> {
  const { host, port } = parseHostPort(listen);
  /** Open connections, oldest first, and since when a request of theirs is being answered (0: idle). */
  const open = new Map<Socket, number>();
  const server = createServer({ connectionsCheckingInterval: 1_000, headersTimeout: REQUEST_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS }, (request, response) => {
    const socket = request.socket;
    open.set(socket, Date.now());
    const answered = () => void (open.has(socket) && open.set(socket, 0));
    response.once('finish', answered).once('close', answered);
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found; metrics are on GET /metrics\n');
      return;
    }
    const timer = setTimeout(() => response.destroy(), SEND_TIMEOUT_MS).unref();
    response.once('close', () => clearTimeout(timer));
    handler(request, response);
  });
  server.on('connection', (socket: Socket) => {
    open.set(socket, 0);
    socket.once('close', () => open.delete(socket));
    if (options.maxConnections === undefined || open.size <= options.maxConnections) return;
    let victim = socket;
    let stalled: Socket | undefined;
    const now = Date.now();
    for (const [held, since] of open) {
      if (held === socket) continue;
      if (since === 0) {
        victim = held;
        break;
      }
      // A client that asked and does not read (its socket full for a while) holds its slot until the
      // send timeout: eight of them kept every scrape out 30 s at a time (found in a review).
      if (!stalled && now - since > STALLED_MS && held.writableNeedDrain) stalled = held;
    }
    if (victim === socket && stalled) victim = stalled;
    open.delete(victim);
    victim.destroy();
  });
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

/**
 * Answers 200 with `chunks`, a chunk at a time: waits for the socket to drain when it is full and
 * lets the event loop run when the scrapes' slice is over (pauseScrapes), so no single write hands it the whole text. Stops when
 * the client goes.
 */
export async function sendChunks(response: ServerResponse, chunks: readonly Buffer[]): Promise<void> {
  let closed = false;
  response.once('close', () => (closed = true));
  const length = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  response.writeHead(200, { 'content-type': 'text/plain', 'content-length': length });
  for (const chunk of chunks) {
    if (closed) return;
    if (!response.write(chunk) && !closed) await drainedOrClosed(response);
    // A write the socket takes at once drains on the next tick, so without this a fast reader
    // would have the whole answer written before the event loop ran again.
    await pauseScrapes();
  }
  if (!closed) response.end();
}

function drainedOrClosed(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done).off('close', done);
      resolve();
    };
    response.on('drain', done).on('close', done);
  });
}
