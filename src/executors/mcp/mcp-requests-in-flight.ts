import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * Most ids of dispatch's requests remembered per connection; past it the oldest is forgotten. Every
 * id is forgotten once answered, cancelled, failed to send, or its connection closed (as the SDK
 * forgets its handlers): the bound only keeps a path missed, in this SDK version or a later one,
 * from growing the set without end. Forgetting one costs at most its answer counted as an error.
 */
export const MAX_REQUESTS_REMEMBERED = 65_536;

const CANCELLED = 'notifications/cancelled';

/**
 * The answers found (by `answered`) to answer a request in flight, as they go on to the client:
 * mcp-liveness takes only those as proof that a server is alive (a hung server may keep sending
 * answers to ids never used, under the errors' rate). Kept by object: each message read is a new
 * one, so none is held past its handling.
 */
const answersInFlight = new WeakSet<object>();

/** Whether `message` was found (by a RequestsInFlight's `answered`) to answer a request in flight. */
export const answersRequestInFlight = (message: unknown): boolean => typeof message === 'object' && message !== null && answersInFlight.has(message);

/**
 * The ids of the requests dispatch sent a server and awaits an answer to, as the SDK's client
 * sees them (its `_responseHandlers`, private: kept here from what the transport sends instead).
 * Tells an answer to one of them from an answer to an id never used, answered already, or given up
 * (its request timed out or was cancelled: the SDK sends `notifications/cancelled`), which the SDK
 * reports as an error ("Received a response for an unknown message ID") after reading it.
 */
export interface RequestsInFlight {
  /** Notes a message dispatch is about to send: a request's id is remembered, a cancellation's forgotten. */
  sending(message: JSONRPCMessage): void;
  /** Forgets the id of a request that could not be sent (the SDK rejects it, its handler removed). */
  unsent(message: JSONRPCMessage): void;
  /**
   * Whether `answer` answers a request in flight, forgetting its id: a second answer to it is not.
   * One that does is marked so (answersRequestInFlight).
   */
  answered(answer: JSONRPCMessage): boolean;
  /** Forgets them all: the connection closed (the SDK drops its handlers). */
  clear(): void;
}

/** The SDK keys its handlers by `Number(id)`: an answer to "7" finds request 7, so it is no error here either. */
const key = (id: unknown): number => Number(id);

export function createRequestsInFlight(max = MAX_REQUESTS_REMEMBERED): RequestsInFlight {
  const ids = new Set<number>();
  return {
    sending(message) {
      if (!('method' in message)) return;
      if ('id' in message) {
        ids.add(key(message.id));
        // A Set iterates in insertion order: the first is the oldest.
        if (ids.size > max) ids.delete(ids.values().next().value as number);
      } else if (message.method === CANCELLED) {
        ids.delete(key((message.params as { requestId?: unknown } | undefined)?.requestId));
      }
    },
    unsent(message) {
      if ('method' in message && 'id' in message) ids.delete(key(message.id));
    },
    answered(answer) {
      if (!('id' in answer) || !ids.delete(key(answer.id))) return false;
      answersInFlight.add(answer);
      return true;
    },
    clear() {
      ids.clear();
    },
  };
}
