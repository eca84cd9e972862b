import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/** Bounds of what a server may make dispatch send it (RequestGuardOptions). */
export interface RequestGuardOptions {
  /** Most answers to the server's requests being sent at a time. @default MAX_ANSWERS_IN_FLIGHT */
  readonly maxAnswersInFlight?: number;
  /** Most bytes written to a stdio server's stdin and not yet read by it. @default MAX_UNREAD_BYTES */
  readonly maxUnreadBytes?: number;
  /** Told once, when a bound is passed: the connection is to be dropped. */
  readonly onAbuse: (reason: string) => void;
}

/**
 * Most answers to a server's requests (e.g. roots/list, sampling: dispatch offers no client
 * capabilities and answers "method not found"; ping) being sent at a time. A stdio server that
 * does not read its stdin leaves each answer pending on a `drain`; a Streamable HTTP server
 * leaves each an open POST. A server that reads what it asked for never has more than a few.
 */
export const MAX_ANSWERS_IN_FLIGHT = 100;
/** Most bytes written to a stdio server and not read by it before its connection is dropped. */
export const MAX_UNREAD_BYTES = 8 * 1024 * 1024;

interface StdinInternals {
  readonly _process?: { readonly stdin?: { readonly writableLength: number } | null };
}

const isAnswer = (message: JSONRPCMessage): boolean => 'id' in message && !('method' in message);

/**
 * Bounds what `transport` sends for its server: the answers to the server's requests in flight
 * and, for a stdio server, the bytes written to it unread. Past a bound `onAbuse` is told (once),
 * and from then on the transport neither sends answers nor delivers messages, until it is closed:
 * a server sending requests and never reading the answers (with the SDK's transports, one buffered
 * write and `drain` listener, or one POST, per answer) otherwise grew the heap until V8 aborted.
 * Wraps `start` to wrap the `onmessage` the client sets before it, and `send`.
 */
export function guardRequests(transport: Transport, options: RequestGuardOptions): void {
  const maxInFlight = options.maxAnswersInFlight ?? MAX_ANSWERS_IN_FLIGHT;
  const maxUnread = options.maxUnreadBytes ?? MAX_UNREAD_BYTES;
  let inFlight = 0;
  let tripped = false;
  const trip = (reason: string) => {
    if (tripped) return;
    tripped = true;
    options.onAbuse(reason);
  };
  const unread = () => (transport as unknown as StdinInternals)._process?.stdin?.writableLength ?? 0;

  const start = transport.start.bind(transport);
  transport.start = () => {
    const deliver = transport.onmessage;
    if (deliver) {
      transport.onmessage = (message, extra) => {
        if (!tripped) deliver(message, extra);
      };
    }
    return start();
  };

  const send = transport.send.bind(transport);
  transport.send = async (message, sendOptions) => {
    const answer = isAnswer(message);
    if (tripped && answer) return;
    const pending = unread();
    if (pending > maxUnread) {
      trip(`the MCP server does not read its input (${pending} bytes written to it unread, bound ${maxUnread})`);
      if (answer) return;
      throw new Error('the MCP server does not read its input');
    }
    if (!answer) return send(message, sendOptions);
    if (inFlight >= maxInFlight) {
      trip(`the MCP server sent requests faster than it read their answers (${inFlight} answers in flight, bound ${maxInFlight})`);
      return;
    }
    inFlight++;
    try {
      await send(message, sendOptions);
    } finally {
      inFlight--;
    }
  };
}
