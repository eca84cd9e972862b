import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { linkAbort } from './mcp-abort-link';

/**
 * A fetch for `StreamableHTTPClientTransport` that gives each request its own AbortSignal,
 * linked to the signal the transport passes until the response body ends, fails or is cancelled.
 *
 * The transport passes one signal, alive as long as the connection, to every request. Node's
 * fetch (undici 6, bundled with Node 20) adds an abort listener to it per request and removes it
 * only when the request is garbage collected (nodejs/undici#3157, nodejs/node#52635; fixed in
 * nodejs/undici#5318, which Node 20 does not ship): under load the signal held thousands of
 * listeners and Node warned of a leak. Closing the transport still aborts requests in flight and
 * the streams being read.
 */
export function createRequestScopedFetch(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const shared = init?.signal;
    if (!shared) return base(url, init);
    const link = linkAbort(shared);
    try {
      return releasedWithBody(await base(url, { ...init, signal: link.signal }), link.release);
    } catch (error) {
      link.release();
      throw error;
    }
  };
}

/**
 * `response` with a body that calls `release` once read to its end, failed or cancelled. Only
 * success bodies are tracked: the transport reads those as SSE streams or JSON, and reads or
 * cancels the short bodies of errors and redirects at once, which are returned as they are.
 */
function releasedWithBody(response: Response, release: () => void): Response {
  const body = response.body;
  if (!response.ok || !body || response.status === 204 || response.status === 205) {
    release();
    return response;
  }
  const reader = body.getReader();
  const tracked = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        release();
        controller.close();
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
  return new Response(tracked, { status: response.status, statusText: response.statusText, headers: response.headers });
}
