import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * Most ids of dispatch's requests remembered per connection; past it the oldest is forgotten. Every
 * id is forgotten once answered, cancelled, failed to send, or its connection closed (as the SDK
 * forgets its handlers): the bound only keeps a path missed, in this SDK version or a later one,
 * from growing the set without end. Forgetting one costs at most its answer counted as an error.
 */
export const MAX_REQUESTS_REMEMBERED = 65_536;

/**
 * Most ids of requests given up (timed out or cancelled) remembered per connection for their late
 * answer; past it the oldest is forgotten. The Python SDK answers every request it is told is
 * cancelled (RequestResponder.cancel: an error "Request cancelled"): taken for errors, a server
 * with 250 calls a second cancelled or timed out (or 1,000 timing out in one stall) lost its
 * connection, every other call on it failing. More than this many given up within GIVEN_UP_MS is a
 * server past help: a late answer to one forgotten counts as an error, as before.
 */
export const MAX_GIVEN_UP_REMEMBERED = 4_096;
/** How long a request given up is remembered for its one late answer. */
export const GIVEN_UP_MS = 60_000;

/** How long, and how many, requests given up are remembered (createRequestsInFlight). */
export interface GivenUpOptions {
  /** @default MAX_GIVEN_UP_REMEMBERED */
  readonly max?: number;
  /** @default GIVEN_UP_MS */
  readonly ms?: number;
  /** The clock, in ms. @default performance.now */
  readonly now?: () => number;
}

const CANCELLED = 'notifications/cancelled';

/**
 * The answers found (by `answered`) to answer a request in flight or given up lately, as they go on
 * to the client: mcp-liveness takes only those as proof that a server is alive (a hung server may
 * keep sending answers to ids never used, under the errors' rate; it can send one late answer per
 * request dispatch gave up at most, and a server answering one reads its input). Kept by object:
 * each message read is a new one, so none is held past its handling.
 */
const answersInFlight = new WeakSet<object>();

/** Whether `message` was found (by a RequestsInFlight's `answered`) to answer a request in flight or given up lately. */
export const answersRequestInFlight = (message: unknown): boolean => typeof message === 'object' && message !== null && answersInFlight.has(message);

/**
 * The ids of the requests dispatch sent a server and awaits an answer to, as the SDK's client
 * sees them (its `_responseHandlers`, private: kept here from what the transport sends instead).
 * Tells an answer to one of them, or the one late answer to one given up (its request timed out or
 * was cancelled: the SDK sends `notifications/cancelled`) within GIVEN_UP_MS, from an answer to an
 * id never used, answered already, or given up long ago, or with no id at all, which the SDK
 * reports as an error ("Received a response for an unknown message ID") after reading it.
 */
export interface RequestsInFlight {
  /**
   * Notes a message dispatch is about to send: a request's id is remembered, a cancellation's moved
   * to those given up (remembered for their late answer).
   */
  sending(message: JSONRPCMessage): void;
  /** Forgets the id of a request that could not be sent (the SDK rejects it, its handler removed). */
  unsent(message: JSONRPCMessage): void;
  /**
   * Whether `answer` answers a request in flight or given up lately, forgetting its id: a second
   * answer to it does not, nor one with no id. One that does is marked so (answersRequestInFlight).
   */
  answered(answer: JSONRPCMessage): boolean;
  /** Forgets them all, and those given up: the connection closed (the SDK drops its handlers). */
  clear(): void;
}

/** The SDK keys its handlers by `Number(id)`: an answer to "7" finds request 7, so it is no error here either. */
const key = (id: unknown): number => Number(id);

export function createRequestsInFlight(max = MAX_REQUESTS_REMEMBERED, late: GivenUpOptions = {}): RequestsInFlight {
  const maxGivenUp = late.max ?? MAX_GIVEN_UP_REMEMBERED;
  const givenUpMs = late.ms ?? GIVEN_UP_MS;
  const now = late.now ?? (() => performance.now());
  const ids = new Set<number>();
  /** The requests given up, each with when: in the order given up (a Map iterates in insertion order), so the oldest first. */
  const givenUp = new Map<number, number>();
  /** Forgets those given up longer than givenUpMs ago. */
  const expire = () => {
    const before = now() - givenUpMs;
    for (const [id, at] of givenUp) {
      if (at > before) break;
      givenUp.delete(id);
    }
  };
  const giveUp = (id: number) => {
    expire();
    givenUp.set(id, now());
    if (givenUp.size > maxGivenUp) givenUp.delete(givenUp.keys().next().value as number);
  };
  return {
    sending(message) {
      if (!('method' in message)) return;
      if ('id' in message) {
        ids.add(key(message.id));
        // A Set iterates in insertion order: the first is the oldest.
        if (ids.size > max) ids.delete(ids.values().next().value as number);
      } else if (message.method === CANCELLED) {
        // Only a request in flight awaits a late answer: one answered already is answered once.
        const id = key((message.params as { requestId?: unknown } | undefined)?.requestId);
        if (ids.delete(id)) giveUp(id);
      }
    },
    unsent(message) {
      if ('method' in message && 'id' in message) ids.delete(key(message.id));
    },
    answered(answer) {
      // An error with no id (valid JSON-RPC) answers nothing: the SDK reports it as it does an unknown id.
      if (!('id' in answer) || answer.id === undefined) return false;
      const id = key(answer.id);
      if (!ids.delete(id)) {
        expire();
        if (!givenUp.delete(id)) return false;
      }
      answersInFlight.add(answer);
      return true;
    },
    clear() {
      ids.clear();
      givenUp.clear();
    },
  };
}
