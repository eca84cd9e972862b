import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { createMessageRate, isServerMessage, type MessageRateOptions } from './mcp-message-rate';

/** Bounds of what a server may make dispatch send it (RequestGuardOptions). */
export interface RequestGuardOptions {
  /** Most answers to the server's requests being sent at a time. @default MAX_ANSWERS_IN_FLIGHT */
  readonly maxAnswersInFlight?: number;
  /** Most bytes written to a stdio server's stdin and not yet read by it. @default MAX_UNREAD_BYTES */
  readonly maxUnreadBytes?: number;
  /** How long a stdio server's stdin may take nothing, over maxUnreadBytes, before it is dropped. @default MAX_UNREAD_STALL_MS */
  readonly maxStallMs?: number;
  /** The rate of the server's own requests and notifications. @default MAX_SERVER_MESSAGES_PER_SECOND, MAX_SERVER_MESSAGE_BURST */
  readonly messageRate?: MessageRateOptions;
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
/**
 * How long a stdio server's unread bytes may stay over MAX_UNREAD_BYTES with its stdin taking
 * nothing (as the worker pool waits for an unread assignment). Ten parallel 1 MB calls fill the
 * buffer in one tick while the server reads them at once: the bytes alone do not tell abuse.
 */
export const MAX_UNREAD_STALL_MS = 2_000;

interface StdinInternals {
  readonly _process?: { readonly stdin?: { readonly writableLength: number; readonly writableNeedDrain: boolean } | null; readonly stdout?: { destroy(): void } | null };
}

const isAnswer = (message: JSONRPCMessage): boolean => 'id' in message && !('method' in message);

/**
 * Bounds what `transport` sends for its server: the answers to the server's requests in flight
 * (stdio: waiting for a `drain`; HTTP: their POST open) and, for a stdio server, the bytes written
 * to it unread while its stdin takes none (checked as answers are sent: dispatch's own requests
 * are never refused nor counted), and the rate of the server's own requests and notifications
 * (mcp-message-rate; answers to dispatch's requests are not counted). Past a bound `onAbuse` is
 * told (once), and from then on the transport neither sends answers nor delivers messages, nor
 * reads a stdio server's output, until it is closed:
 * a server sending requests and never reading the answers (with the SDK's transports, one buffered
 * write and `drain` listener, or one POST, per answer) otherwise grew the heap until V8 aborted.
 * Wraps `start` to wrap the `onmessage` the client sets before it, and `send`.
 */
export function guardRequests(transport: Transport, options: RequestGuardOptions): void {
  const maxInFlight = options.maxAnswersInFlight ?? MAX_ANSWERS_IN_FLIGHT;
  const maxUnread = options.maxUnreadBytes ?? MAX_UNREAD_BYTES;
  const maxStall = options.maxStallMs ?? MAX_UNREAD_STALL_MS;
  const rate = createMessageRate(options.messageRate);
  let inFlight = 0;
  let tripped = false;
  const trip = (reason: string) => {
    if (tripped) return;
    tripped = true;
    // Nothing more is read from a stdio server: its output would be parsed until it exits, which a
    // server flooding it does 2 s or more after its stdin is closed (the SDK's SIGTERM).
    (transport as unknown as StdinInternals)._process?.stdout?.destroy();
    options.onAbuse(reason);
  };
  const stdin = () => (transport as unknown as StdinInternals)._process?.stdin ?? undefined;
  /** Unread bytes just after the last send, and when stdin was last seen taking some (or under the bound). */
  let lastUnread = 0;
  let takenAt = Date.now();
  /** The unread bytes now, noting whether stdin has taken some since the last send. */
  const observe = (): number => {
    const pending = stdin()?.writableLength ?? 0;
    if (pending < lastUnread || pending <= maxUnread) takenAt = Date.now();
    return pending;
  };
  const written = () => void (lastUnread = stdin()?.writableLength ?? 0);

  const start = transport.start.bind(transport);
  transport.start = () => {
    const deliver = transport.onmessage;
    if (deliver) {
      transport.onmessage = (message, extra) => {
        if (!tripped && isServerMessage(message) && !rate.admit()) trip(`the MCP server sent more than ${rate.perSecond} requests and notifications a second (burst ${rate.burst})`);
        if (!tripped) deliver(message, extra);
      };
    }
    return start();
  };

  const send = transport.send.bind(transport);
  transport.send = async (message, sendOptions) => {
    const pending = observe();
    // Dispatch's own requests are always sent (they have their timeouts); only answers are bounded.
    if (!isAnswer(message)) {
      const sent = send(message, sendOptions);
      written();
      return sent;
    }
    if (tripped) return;
    if (pending > maxUnread && Date.now() - takenAt >= maxStall) return trip(`the MCP server does not read its input (${pending} bytes written to it unread, none taken for ${maxStall} ms; bound ${maxUnread})`);
    if (inFlight >= maxInFlight) return trip(`the MCP server sent requests faster than it read their answers (${inFlight} answers in flight, bound ${maxInFlight})`);
    const sent = send(message, sendOptions);
    written();
    // Over stdio an answer waits only while stdin wants a `drain` (the SDK resolves at once otherwise);
    // over HTTP, while its POST is open.
    const waiting = stdin();
    if (waiting && !waiting.writableNeedDrain) return sent;
    inFlight++;
    try {
      await sent;
    } finally {
      inFlight--;
    }
  };
}
