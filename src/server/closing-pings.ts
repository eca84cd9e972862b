import type { Http2Session } from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../log';

// grpc-js (1.14) pings each client connection every keepalive_time_ms and destroys the
// connection when a ping fails. Node fails every ping on an HTTP/2 session that is closing
// gracefully (it sent or received GOAWAY: a server shutdown, a connection past its age, a client
// closing its channel), so the next ping ended the calls and streams still running on a
// connection that was only waiting for them to finish (grpc/grpc-node#3068 reports the client
// side). Here a closing session's pings are answered at once without being sent: such a session
// ends when its last stream does, or when the server's grace period forces it.

/** A session's own `ping`, as Node defines it. */
type Ping = Http2Session['ping'];

/** Pings of `session` while it closes are acknowledged locally instead of failing. */
function answerClosingPings(session: Http2Session): void {
  const ping: Ping = session.ping;
  const guarded = function (this: Http2Session, ...args: unknown[]): boolean {
    if (!this.closed || this.destroyed) return (ping as (...a: unknown[]) => boolean).apply(this, args);
    const callback = args.find((a): a is (error: Error | null, duration: number, payload: Buffer) => void => typeof a === 'function');
    const payload = args.find((a): a is Buffer => Buffer.isBuffer(a)) ?? Buffer.alloc(8);
    if (callback) process.nextTick(callback, null, 0, payload);
    return true;
  };
  session.ping = guarded as Ping;
}

/**
 * Makes the keep-alive pings of `server`'s connections harmless once a connection is closing.
 * Call after the server is bound: it hooks the HTTP/2 servers grpc-js made (a private field of
 * grpc-js's Server; test/service/connection-lifetime.test.ts fails if that changes). Returns
 * false, after a warning, when they cannot be found.
 */
export function guardClosingPings(server: grpc.Server, logger: Logger): boolean {
  const http2Servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(http2Servers instanceof Map) || http2Servers.size === 0) {
    logger.warn('keep-alive pings may end calls on closing connections: the HTTP/2 servers of grpc-js were not found (an unexpected grpc-js version)');
    return false;
  }
  for (const http2Server of http2Servers.keys() as IterableIterator<{ on(event: 'session', listener: (session: Http2Session) => void): void }>) {
    http2Server.on('session', answerClosingPings);
  }
  return true;
}
