import { connect, type ClientHttp2Session, type Http2Session } from 'node:http2';
import { Duplex } from 'node:stream';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../log';

// grpc-js (1.14) pings each connection every keepalive_time_ms, server and client side alike,
// and destroys the connection when a ping fails. Node fails every ping on an HTTP/2 session that
// is closing gracefully (it sent or received GOAWAY: a server shutdown, a connection past its age,
// a client closing its channel), so the next ping ended the calls and streams still running on a
// connection that was only waiting for them to finish (grpc/grpc-node#3068 reports the client
// side). Here a closing session's pings are answered at once without being sent: such a session
// ends when its last stream does, or when the server's grace period forces it. The cost: a peer
// that vanishes half-open while a connection closes is not found by pings on it any more.

/** A session's own `ping`, as Node defines it. */
type Ping = Http2Session['ping'];

/** Acknowledges a ping of a closing (not yet destroyed) session locally; false when `session` is not closing. */
function answeredLocally(session: Http2Session, args: unknown[]): boolean {
  if (!session.closed || session.destroyed) return false;
  const callback = args.find((a): a is (error: Error | null, duration: number, payload: Buffer) => void => typeof a === 'function');
  const payload = args.find((a): a is Buffer => Buffer.isBuffer(a)) ?? Buffer.alloc(8);
  if (callback) process.nextTick(callback, null, 0, payload);
  return true;
}

/**
 * Marks a guarded `ping`, process-wide (Symbol.for): another copy of this module in the process (a
 * bundle beside a dependency, a test runner's module registry per file) finds Node's prototype
 * guarded already. Each copy wrapped the last one's guard before: a chain of wrappers growing with
 * the copies, each keeping its copy's whole module graph alive (a jest worker kept every test
 * file's context, ~25 MB each, until the worker was replaced).
 */
const GUARDED = Symbol.for('dispatch.closing-pings.guarded');

/** `ping` that answers locally while its session closes, and is `ping` otherwise. */
function guarded(ping: Ping): Ping {
  const guard = function (this: Http2Session, ...args: unknown[]): boolean {
    return answeredLocally(this, args) || (ping as (...a: unknown[]) => boolean).apply(this, args);
  } as Ping;
  Object.defineProperty(guard, GUARDED, { value: true });
  return guard;
}

/** Pings of `session` while it closes are acknowledged locally instead of failing. */
function answerClosingPings(session: Http2Session): void {
  session.ping = guarded(session.ping);
}

/**
 * Makes the keep-alive pings of `server`'s connections harmless once a connection is closing.
 * Call after the server is bound: it hooks the HTTP/2 servers grpc-js made (a private field of
 * grpc-js's Server; test/service/connection-lifetime.test.ts fails if that changes). Returns
 * false, after a warning, when they cannot be found.
 */
export function guardClosingPings(server: grpc.Server, logger: Logger): boolean {
  const http2Servers = http2ServersOf(server);
  if (!http2Servers) {
    logger.warn('keep-alive pings may end calls on closing connections: the HTTP/2 servers of grpc-js were not found (an unexpected grpc-js version)');
    return false;
  }
  for (const http2Server of http2Servers) http2Server.on('session', answerClosingPings);
  return true;
}

/** A Node HTTP/2 server as grpc-js keeps it: what matters here is its sessions. */
interface Http2ServerLike {
  on(event: 'session', listener: (session: Http2Session) => void): void;
}

/**
 * The HTTP/2 servers grpc-js made for `server` once bound (a private field of grpc-js's Server;
 * test/service/connection-lifetime.test.ts and forced-shutdown.test.ts fail if that changes), or
 * undefined when they cannot be found.
 */
export function http2ServersOf(server: grpc.Server): Http2ServerLike[] | undefined {
  const http2Servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(http2Servers instanceof Map) || http2Servers.size === 0) return undefined;
  return [...(http2Servers.keys() as IterableIterator<Http2ServerLike>)];
}

/** Node's client session prototype, once found. Whether its `ping` is guarded is read off it (GUARDED): another copy of this module may have guarded it, or undone that. */
let clientPrototype: ClientHttp2Session | undefined;

/** Node's ClientHttp2Session.prototype (the class is not exported), from a session on a socket that goes nowhere. */
export function clientSessionPrototype(): ClientHttp2Session {
  const nowhere = new Duplex({ read: () => undefined, write: (_chunk, _encoding, done) => done() });
  const session = connect('http://guard.invalid', { createConnection: () => nowhere });
  session.on('error', () => undefined);
  session.destroy();
  nowhere.destroy();
  return Object.getPrototypeOf(session) as ClientHttp2Session;
}

/**
 * The same for every HTTP/2 client session of this process (grpc-js offers no hook on the
 * sessions of a channel): a closing client session's pings are answered locally. Process-wide and
 * idempotent; the client library calls it for every channel that pings. Returns a function that
 * undoes it (for tests).
 */
export function guardClientPings(): () => void {
  const proto = (clientPrototype ??= clientSessionPrototype());
  let guard = proto.ping as Ping & { [GUARDED]?: true };
  if (!guard[GUARDED]) {
    guard = guarded(guard);
    Object.defineProperty(proto, 'ping', { value: guard, writable: true, configurable: true });
  }
  return () => {
    // Node defines `ping` on Http2Session.prototype only: deleting the shadow restores it.
    if (proto.ping === guard) delete (proto as { ping?: Ping }).ping;
  };
}
