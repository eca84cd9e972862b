import { constants, type Http2Session } from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../log';
import { http2ServersOf } from './closing-pings';

/** The HTTP/2 sessions of a server's clients, to cut when its grace period ends. */
export interface OpenSessions {
  /** Destroys every session still open (its streams end for the client, CANCEL). */
  destroyAll(): void;
}

/**
 * Tracks the sessions of `server`'s connections. grpc-js's forceShutdown() destroys only the
 * sessions it records for channelz, and with channelz off (as dispatchd runs it: its per-call
 * bookkeeping would be unread) it records none (grpc-js 1.14): streams still open at the end of
 * the grace period, a worker's Work stream, a relayed call, a Subscribe, outlived it until their
 * peers closed them. Call after the server is bound; logs a warning and tracks nothing when the
 * HTTP/2 servers of grpc-js cannot be found.
 */
export function trackOpenSessions(server: grpc.Server, logger: Logger): OpenSessions {
  const sessions = new Set<Http2Session>();
  const http2Servers = http2ServersOf(server);
  if (!http2Servers) logger.warn('the grace period may not end open streams: the HTTP/2 servers of grpc-js were not found (an unexpected grpc-js version)');
  for (const http2Server of http2Servers ?? []) {
    http2Server.on('session', (session) => {
      sessions.add(session);
      session.once('close', () => sessions.delete(session));
    });
  }
  return {
    destroyAll() {
      for (const session of sessions) if (!session.destroyed) session.destroy(undefined, constants.NGHTTP2_CANCEL);
      sessions.clear();
    },
  };
}
