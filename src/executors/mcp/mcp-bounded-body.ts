import { createAnswerCounter } from './mcp-answer-bound';

/** What ends a body past the bound: `standIn` (a JSON-RPC message) when there is one, else `error`. */
export interface Overflow {
  readonly error: Error;
  readonly standIn?: string;
}

const LF = 0x0a;
const CR = 0x0d;
/** Type of the event that closes an SSE event cut at the bound: the SDK reads only 'message' events. */
const DISCARDED_EVENT = 'dispatch-discarded';
const encoder = new TextEncoder();

/**
 * `response` with a body counted as it is read (see createAnswerCounter) that calls `release` once
 * read to its end, cut or cancelled. Error and redirect bodies are released at once: the transport
 * reads or cancels those short bodies at once.
 *
 * Past `maxBytes` the download is cancelled and the body of a successful response ends with
 * `overflow().standIn`, or fails with `overflow().error` when there is none. A JSON body is read
 * whole before any of it is handed on (the SDK parses it whole anyway), so the stand-in replaces
 * it; an SSE stream is handed on event by event, so the event cut short is closed as one the SDK
 * skips and the stand-in follows as one more event.
 *
 * `stoppable`, when given, is handed a function that ends the body early: the download is
 * cancelled (its connection closed) and the body ends as if the server had ended it, so the SDK
 * reads a stream that ended, not one that failed (which it would report as a lost stream).
 *
 * `endsOnFailure`, when given, tells whether a read that failed (the connection cut) ends the body
 * as if the server had ended it, rather than failing it.
 */
export function boundedResponse(response: Response, maxBytes: number, overflow: () => Overflow, release: () => void, stoppable?: (stop: (reason: unknown) => void) => void, endsOnFailure?: () => boolean): Response {
  const body = response.body;
  if (!response.ok || !body || response.status === 204 || response.status === 205) release();
  if (!body) return response;
  const sse = (response.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
  const past = createAnswerCounter(sse, maxBytes);
  const reader = body.getReader();
  let lastByte = LF;
  // A read pending when the reader is cancelled ends as done: pull closes the body, and releases.
  stoppable?.((reason) => void reader.cancel(reason).catch(() => undefined));

  const cut = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    const { error, standIn } = overflow();
    release();
    // Stops the download: undici closes the connection of a body cancelled before its end.
    reader.cancel(error).catch(() => undefined);
    if (standIn === undefined || !response.ok) return controller.error(error);
    controller.enqueue(encoder.encode(sse ? sseEnding(lastByte, standIn) : standIn));
    controller.close();
  };

  const counted = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (!sse) {
          const chunks: Uint8Array[] = [];
          for (let read = await reader.read(); !read.done; read = await reader.read()) {
            if (past(read.value)) return cut(controller);
            chunks.push(read.value);
          }
          release();
          for (const chunk of chunks) controller.enqueue(chunk);
          return controller.close();
        }
        const { done, value } = await reader.read();
        if (done) {
          release();
          return controller.close();
        }
        if (past(value)) return cut(controller);
        if (value.length > 0) lastByte = value[value.length - 1]!;
        controller.enqueue(value);
      } catch (error) {
        release();
        if (endsOnFailure?.() === true) controller.close();
        else controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
  return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * The end of an SSE stream cut after a byte `lastByte`: ends the line under way, names the event
 * under way DISCARDED_EVENT (the last `event:` field of an event counts) and ends it, then sends
 * `message` as an event of its own. After a line's end no newline is added: one more would end the
 * event under way as it is.
 */
function sseEnding(lastByte: number, message: string): string {
  const lineEnd = lastByte === LF || lastByte === CR ? '' : '\n';
  return `${lineEnd}event: ${DISCARDED_EVENT}\n\ndata: ${message}\n\n`;
}
