import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Dispatcher } from 'undici';
import { linkAbort } from './mcp-abort-link';
import { DEFAULT_MAX_ANSWER_BYTES } from './mcp-answer-bound';
import { answerTooLargeResponse, requestIdOf } from './mcp-answer-stand-in';
import { boundedResponse, type Overflow } from './mcp-bounded-body';
import { undici } from '../undici-lazy';
import { answerTooLargeError, eventTooLargeError, rateLimitedError } from './mcp-errors';
import type { SentHooks } from './mcp-sent-hooks';

/** Options of {@link createRequestScopedFetch}. */
export interface RequestScopedFetchOptions {
  /**
   * Largest answer read, in bytes: a body whole (a JSON answer, an error's text), or each event of
   * an SSE stream. Past it the download is cancelled (its connection to the server is closed) and
   * the body ends (see createRequestScopedFetch), so no answer of any size is held whole in memory
   * before the output cap cuts it. @default DEFAULT_MAX_ANSWER_BYTES (64 MiB)
   */
  readonly maxAnswerBytes?: number;
  /** The server, as its errors name it. @default "mcp" */
  readonly server?: string;
  /** Hooks told when a request's POST is handed to a connected socket (see SentHooks); needs a `base` of Node's fetch (undici), which takes a `dispatcher`. */
  readonly sentHooks?: SentHooks;
  /**
   * What every request (POST, GET stream, DELETE) is made through, passed to `base` (Node's fetch,
   * or undici's) as its `dispatcher`: the transport's own (mcp-dispatcher.ts), ended with it.
   * @default Node's fetch's own (undici's global dispatcher)
   */
  readonly dispatcher?: Dispatcher;
}

/**
 * A fetch for `StreamableHTTPClientTransport` that bounds what it reads and gives each request its
 * own AbortSignal, linked to the signal the transport passes until the response body ends, fails or
 * is cancelled.
 *
 * The bound: the SDK reads a JSON answer with `response.json()` and an SSE stream into its parser,
 * both whole. A POST's answer past `maxAnswerBytes` is cut (see boundedResponse) and ends with a
 * JSON-RPC error response to the request the POST carries (answerTooLargeResponse): the SDK hands
 * it to that request alone, which fails it (classifyMcpError: answerTooLargeError, DURING); the
 * connection stays. Without a request id (or with an error status) the body fails with
 * answerTooLargeError. An event past it on the GET stream fails that stream (eventTooLargeError),
 * which the connection takes as a lost stream.
 *
 * A POST answered HTTP 429 fails with rateLimitedError (its Retry-After, which the SDK's error
 * leaves out, read here); the SDK hands what its fetch throws to the request as it is.
 *
 * The signal: the transport passes one, alive as long as the connection, to every request. Node's
 * fetch (undici 6, bundled with Node 20) adds an abort listener to it per request and removes it
 * only when the request is garbage collected (nodejs/undici#3157, nodejs/node#52635; fixed in
 * nodejs/undici#5318, which Node 20 does not ship): under load the signal held thousands of
 * listeners and Node warned of a leak. Closing the transport still aborts requests in flight and
 * the streams being read.
 *
 * A cancelled request: when a call is aborted or times out, the SDK stops waiting and POSTs a
 * `notifications/cancelled` naming the request, but leaves the request's POST open, and the SDK's
 * server never answers a cancelled request: its SSE stream, and a socket, stayed open until the
 * connection closed. Seeing that notification, the fetch ends the POST of the request it names:
 * aborted if no answer has begun, else its body cancelled (the socket closed) and ended as if the
 * server had ended it (boundedResponse's `stoppable`), which the SDK takes as the end of a stream
 * whose request has no handler left. A server that numbers its events (resumable streams) may be
 * asked by the SDK to resume that stream: that GET is not stopped here.
 */
export function createRequestScopedFetch(base: FetchLike = fetch, options: RequestScopedFetchOptions = {}): FetchLike {
  const maxBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  const server = options.server ?? 'mcp';
  /** What stops the POST of each request whose answer is not yet read to its end, by request id. */
  const inFlight = new Map<RequestId, (reason: unknown) => void>();
  return async (url, init) => {
    const post = (init?.method ?? 'GET').toUpperCase() === 'POST';
    const id = post ? requestIdOf(init?.body) : undefined;
    const cancelled = post && id === undefined ? cancelledRequestOf(init?.body) : undefined;
    if (cancelled !== undefined) inFlight.get(cancelled)?.(new Error(`request ${cancelled} was cancelled`));
    const overflow = (): Overflow => {
      if (!post) return { error: eventTooLargeError(server, maxBytes) };
      const error = answerTooLargeError(server, maxBytes);
      return id === undefined ? { error } : { error, standIn: answerTooLargeResponse(id, error.message, maxBytes) };
    };
    const link = linkAbort(init?.signal ?? new AbortController().signal);
    let stop: (reason: unknown) => void = (reason) => link.abort(reason);
    const stopper = (reason: unknown) => stop(reason);
    if (id !== undefined) inFlight.set(id, stopper);
    const release = () => {
      link.release();
      if (id !== undefined && inFlight.get(id) === stopper) inFlight.delete(id);
    };
    try {
      const onSent = id === undefined ? undefined : options.sentHooks?.take(id);
      const via = onSent === undefined ? options.dispatcher : reportingSentDispatcher(options.dispatcher, onSent);
      const response = await base(url, { ...init, ...(via === undefined ? {} : { dispatcher: asFetchDispatcher(via) }), signal: link.signal });
      if (post && response.status === 429) {
        await response.body?.cancel().catch(() => undefined);
        throw rateLimitedError(server, response.headers.get('retry-after'));
      }
      // The GET stream carries no answer to a call (but when resuming one): cut by the network (a
      // load balancer's idle timeout), not by the transport, it ends as if the server had ended it,
      // and the SDK opens it again. Failed, the SDK reports a lost stream, which drops the connection
      // (isStreamLoss) and failed every call in flight on it, their own streams whole, as lost mid-request.
      const cutByNetwork = post ? undefined : () => !link.signal.aborted;
      return boundedResponse(response, maxBytes, overflow, release, (end) => (stop = end), cutByNetwork);
    } catch (error) {
      release();
      throw error;
    }
  };
}

type RequestId = string | number;

/** `dispatcher`, or Node's own (fetch's), telling `onSent` when a request is handed to a connected socket (http-sent.ts, loaded with undici at first use). */
function reportingSentDispatcher(dispatcher: Dispatcher | undefined, onSent: () => void): Dispatcher {
  const { reportingSent } = require('../http-sent') as typeof import('../http-sent');
  return reportingSent(dispatcher ?? undici().getGlobalDispatcher(), onSent);
}

/** undici's own types, and Node's (undici-types), name one class twice. */
const asFetchDispatcher = (dispatcher: Dispatcher) => dispatcher as unknown as RequestInit['dispatcher'];

/** The id of the request a POSTed `notifications/cancelled` names, or undefined for any other body. */
function cancelledRequestOf(body: unknown): RequestId | undefined {
  if (typeof body !== 'string' || !body.includes('notifications/cancelled')) return undefined;
  try {
    const message = JSON.parse(body) as { method?: unknown; params?: { requestId?: unknown } };
    const id = message.method === 'notifications/cancelled' ? message.params?.requestId : undefined;
    return typeof id === 'string' || typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
}
