import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { linkAbort } from './mcp-abort-link';
import { createAnswerCounter, DEFAULT_MAX_ANSWER_BYTES } from './mcp-answer-bound';
import { currentCallScope } from './mcp-call-scope';
import { answerTooLargeError, eventTooLargeError } from './mcp-errors';

/** Options of {@link createRequestScopedFetch}. */
export interface RequestScopedFetchOptions {
  /**
   * Largest answer read, in bytes: a body whole (a JSON answer, an error's text), or each event of
   * an SSE stream. Past it the body fails and its connection to the server is closed, so no answer
   * of any size is held whole in memory before the output cap cuts it. @default DEFAULT_MAX_ANSWER_BYTES (64 MiB)
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
 * both whole. A POST's answer past `maxAnswerBytes` fails its body and the call whose request it
 * answers (through its McpCallScope: the SDK reports a failed SSE stream to `onerror` only), DURING,
 * with answerTooLargeError; the connection stays. An event past it on the GET stream fails that
 * stream (eventTooLargeError), which the connection takes as a lost stream.
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
    const scope = currentCallScope();
    const post = (init?.method ?? 'GET').toUpperCase() === 'POST';
    const tooLarge = () => {
      if (!post) return eventTooLargeError(server, maxBytes);
      const error = answerTooLargeError(server, maxBytes);
      scope?.fail(error);
      return error;
    };
    const shared = init?.signal;
    const link = shared ? linkAbort(shared) : undefined;
    const release = link ? link.release : () => undefined;
    try {
      return bounded(await base(url, link ? { ...init, signal: link.signal } : init), maxBytes, tooLarge, release);
    } catch (error) {
      release();
      throw error;
    }
  };
}

/**
 * `response` with a body that fails with `tooLarge()` past `maxBytes` (see createAnswerCounter)
 * and calls `release` once read to its end, failed or cancelled. Error and redirect bodies are
 * released at once: the transport reads or cancels those short bodies at once.
 */
function bounded(response: Response, maxBytes: number, tooLarge: () => Error, release: () => void): Response {
  const body = response.body;
  if (!response.ok || !body || response.status === 204 || response.status === 205) release();
  if (!body) return response;
  const sse = (response.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
  const past = createAnswerCounter(sse, maxBytes);
  const reader = body.getReader();
  const counted = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          return controller.close();
        }
        if (!past(value)) return controller.enqueue(value);
        const error = tooLarge();
        release();
        // Stops the download: undici closes the connection of a body cancelled before its end.
        reader.cancel(error).catch(() => undefined);
        controller.error(error);
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
  return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
}
