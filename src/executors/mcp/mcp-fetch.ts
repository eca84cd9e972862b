import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { linkAbort } from './mcp-abort-link';
import { DEFAULT_MAX_ANSWER_BYTES } from './mcp-answer-bound';
import { answerTooLargeResponse, requestIdOf } from './mcp-answer-stand-in';
import { boundedResponse, type Overflow } from './mcp-bounded-body';
import { answerTooLargeError, eventTooLargeError } from './mcp-errors';

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
 * The signal: the transport passes one, alive as long as the connection, to every request. Node's
 * fetch (undici 6, bundled with Node 20) adds an abort listener to it per request and removes it
 * only when the request is garbage collected (nodejs/undici#3157, nodejs/node#52635; fixed in
 * nodejs/undici#5318, which Node 20 does not ship): under load the signal held thousands of
 * listeners and Node warned of a leak. Closing the transport still aborts requests in flight and
 * the streams being read.
 */
export function createRequestScopedFetch(base: FetchLike = fetch, options: RequestScopedFetchOptions = {}): FetchLike {
  const maxBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  const server = options.server ?? 'mcp';
  return async (url, init) => {
    const post = (init?.method ?? 'GET').toUpperCase() === 'POST';
    const overflow = (): Overflow => {
      if (!post) return { error: eventTooLargeError(server, maxBytes) };
      const error = answerTooLargeError(server, maxBytes);
      const id = requestIdOf(init?.body);
      return id === undefined ? { error } : { error, standIn: answerTooLargeResponse(id, error.message, maxBytes) };
    };
    const shared = init?.signal;
    const link = shared ? linkAbort(shared) : undefined;
    const release = link ? link.release : () => undefined;
    try {
      return boundedResponse(await base(url, link ? { ...init, signal: link.signal } : init), maxBytes, overflow, release);
    } catch (error) {
      release();
      throw error;
    }
  };
}
