import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

// An MCP server's own messages (its requests and notifications) cost dispatch ~27-40 us of CPU each
// when processed (read, parsed, checked against the schema, handled or answered): a server sending
// them in a tight loop while reading the answers (no bound of mcp-request-guard passed) took a core
// for as long as it went on. One shed after it is read and parsed (JSON and the JSON-RPC schema),
// before the client handles it, costs ~10 us. So does an answer to an id dispatch never used (the
// client reports it and drops it), or a line that is no JSON-RPC message (the transport reports it):
// uncounted, a server sending those in a tight loop took ~1.1-1.2 s of dispatch's CPU a second.
//
// Their rates are bounded by what they ask of dispatch. A request demands an answer (ping,
// roots/list, sampling, elicitation): past its rate the connection is dropped, since one shed would
// leave the server waiting for an answer that never comes. A notification asks nothing (logs,
// progress; dispatch acts on tools/list_changed alone, which mcp-request-guard holds rather than
// loses): past its rate it is shed, not processed, and the connection stays. A busy server is
// compliant: 12 calls each logging and reporting progress every 5 ms send 4,800 notifications a
// second, which dispatch has no use for (and the first bound, 1,000 messages a second of any kind,
// dropped it and failed its calls). Only a flood far past that (MAX_SERVER_MESSAGES_PER_SECOND,
// counting those shed) drops the connection, bounding what shedding costs too. The allowance is not
// scaled with the calls in flight: shed, a busy server's notifications cost little however many
// calls it runs, and one call's server can send as fast as many calls'. The total counts every
// message, answers included, and every line read that was none (judgeError): a server's answers are
// bounded by dispatch's own requests, far below it. Answers to no request in flight and lines that
// are no message count as errors besides, bounded far lower: a legit server sends neither (the one
// late answer to a request timed out or cancelled is none: the Python SDK answers every request
// cancelled, and a server with many given up lost its connection; mcp-requests-in-flight keeps
// their ids for it), and at the total's rate they took a third of a core, while a process given
// less than that read them slower than the total allowed, so it never dropped them.

/**
 * Most requests an MCP server may send dispatch a second (ping, roots/list, sampling, elicitation,
 * unknown methods) before its connection is dropped. A normal server sends a few: pings, mostly.
 */
export const MAX_SERVER_REQUESTS_PER_SECOND = 1_000;
/**
 * Most requests at once, over MAX_SERVER_REQUESTS_PER_SECOND (a server asking many pings in one
 * write; a normal one asks a hundred at most). Half the 2,000 messages of any kind once allowed:
 * a flood of requests and notifications mixed is dropped after as many messages as before.
 */
export const MAX_SERVER_REQUEST_BURST = 1_000;
/**
 * Most notifications of an MCP server processed a second (logs, progress, list changes, unknown
 * methods); past it they are shed. At this rate and MAX_SERVER_REQUESTS_PER_SECOND both, a server
 * costs dispatch ~6-8% of a core. Separate from the requests' rate: a busy server's notifications
 * never leave its pings without an answer.
 */
export const MAX_SERVER_NOTIFICATIONS_PER_SECOND = 1_000;
/** Most notifications processed at once, over MAX_SERVER_NOTIFICATIONS_PER_SECOND. */
export const MAX_SERVER_NOTIFICATION_BURST = 2_000;
/**
 * Most messages an MCP server may send a second before its connection is dropped: its requests and
 * notifications, shed or not, its answers (to dispatch's requests or to ids it never used), and its
 * lines that were no message. 10x the rates above. What is shed still costs its reading and
 * parsing: a server just under this costs dispatch ~12% of a core (1,000 processed, 9,000 shed),
 * however long it goes on.
 */
export const MAX_SERVER_MESSAGES_PER_SECOND = 10_000;
/**
 * Most at once over MAX_SERVER_MESSAGES_PER_SECOND: three seconds of it. A server sending 20,000
 * a second is dropped after 3 s, one sending as fast as dispatch reads (~60,000-100,000) after
 * ~0.5 s, so past that rate a flood costs at most ~30,000 x 10 us of dispatch's CPU before it is
 * dropped (and each reconnection waits longer, mcp-connection `abused`).
 */
export const MAX_SERVER_MESSAGE_BURST = 30_000;
/**
 * Most errors an MCP server may send a second before its connection is dropped: answers to no
 * request of dispatch in flight (ids never used, answered already, with no id, or given up: timed
 * out or cancelled, past their one late answer, or more than a minute ago or past the 4,096 latest:
 * mcp-requests-in-flight) and lines that are no JSON-RPC message (the transport's errors). Each
 * costs dispatch ~25-40 us; at this rate, 0.4% of a core. The one late answer to a request given
 * up is none, however many are given up (a server answering every cancelled call, as the Python SDK's do).
 */
export const MAX_SERVER_ERRORS_PER_SECOND = 100;
/** Most errors at once over MAX_SERVER_ERRORS_PER_SECOND: a flood of them is dropped after ~25-40 ms of dispatch's CPU. */
export const MAX_SERVER_ERROR_BURST = 1_000;

/** The rate of a server's messages of one kind (createMessageRate). */
export interface MessageRateOptions {
  readonly perSecond?: number;
  readonly burst?: number;
  /** The clock, in ms. @default performance.now */
  readonly now?: () => number;
}

/** A token bucket of a server's messages: `admit` takes one, false when none is left. */
export interface MessageRate {
  readonly perSecond: number;
  readonly burst: number;
  admit(): boolean;
}

/** A bucket holding `burst` tokens, full at first, refilled at `perSecond`. */
export function createMessageRate(options: MessageRateOptions = {}): MessageRate {
  const perSecond = options.perSecond ?? MAX_SERVER_NOTIFICATIONS_PER_SECOND;
  const burst = options.burst ?? MAX_SERVER_NOTIFICATION_BURST;
  const now = options.now ?? (() => performance.now());
  let tokens = burst;
  let at = now();
  return {
    perSecond,
    burst,
    admit() {
      const t = now();
      tokens = Math.min(burst, tokens + ((t - at) * perSecond) / 1_000);
      at = t;
      if (tokens < 1) return false;
      tokens--;
      return true;
    },
  };
}

/** The rates of a server's messages (createServerMessageRates). */
export interface ServerMessageRatesOptions {
  /** @default MAX_SERVER_REQUESTS_PER_SECOND, MAX_SERVER_REQUEST_BURST */
  readonly requests?: MessageRateOptions;
  /** @default MAX_SERVER_NOTIFICATIONS_PER_SECOND, MAX_SERVER_NOTIFICATION_BURST */
  readonly notifications?: MessageRateOptions;
  /** @default MAX_SERVER_MESSAGES_PER_SECOND, MAX_SERVER_MESSAGE_BURST */
  readonly messages?: MessageRateOptions;
  /** @default MAX_SERVER_ERRORS_PER_SECOND, MAX_SERVER_ERROR_BURST */
  readonly errors?: MessageRateOptions;
}

/** What becomes of a server's message: delivered, shed (a notification past its rate), or the reason its connection is to be dropped. */
export type MessageVerdict = 'deliver' | 'shed' | { readonly abuse: string };

/** A server's message rates, judging each message it sends as it comes. */
export interface ServerMessageRates {
  /** Judges a message; `stray`: an answer to no request in flight, counted as an error too. */
  judge(message: JSONRPCMessage, stray?: boolean): MessageVerdict;
  /**
   * Judges an error its transport reports (a line that is not JSON or not a JSON-RPC message, a
   * failed read), counted in the total as a message and as an error: 'deliver' (to the client's
   * onerror) or the reason its connection is to be dropped.
   */
  judgeError(): Exclude<MessageVerdict, 'shed'>;
}

/** The rates of one connection's server, their buckets full at first. */
export function createServerMessageRates(options: ServerMessageRatesOptions = {}): ServerMessageRates {
  const bucket = (given: MessageRateOptions | undefined, perSecond: number, burst: number) =>
    createMessageRate({ perSecond: given?.perSecond ?? perSecond, burst: given?.burst ?? burst, now: given?.now });
  const requests = bucket(options.requests, MAX_SERVER_REQUESTS_PER_SECOND, MAX_SERVER_REQUEST_BURST);
  const notifications = bucket(options.notifications, MAX_SERVER_NOTIFICATIONS_PER_SECOND, MAX_SERVER_NOTIFICATION_BURST);
  const messages = bucket(options.messages, MAX_SERVER_MESSAGES_PER_SECOND, MAX_SERVER_MESSAGE_BURST);
  const errors = bucket(options.errors, MAX_SERVER_ERRORS_PER_SECOND, MAX_SERVER_ERROR_BURST);
  const over = (rate: MessageRate, what: string) => ({ abuse: `the MCP server sent more than ${rate.perSecond} ${what} a second (burst ${rate.burst})` });
  const total = (): Exclude<MessageVerdict, 'shed'> => (messages.admit() ? 'deliver' : over(messages, 'messages'));
  const error = (): Exclude<MessageVerdict, 'shed'> => (errors.admit() ? 'deliver' : over(errors, 'answers to no request or lines that are no message'));
  return {
    judge(message, stray = false) {
      const counted = total();
      if (counted !== 'deliver') return counted;
      if (!isServerMessage(message)) return stray ? error() : 'deliver';
      if ('id' in message) return requests.admit() ? 'deliver' : over(requests, 'requests');
      return notifications.admit() ? 'deliver' : 'shed';
    },
    judgeError() {
      const counted = total();
      return counted === 'deliver' ? error() : counted;
    },
  };
}

/** Whether `message` is the server's own (a request or a notification), not an answer to dispatch's requests. */
export const isServerMessage = (message: JSONRPCMessage): boolean => 'method' in message;
