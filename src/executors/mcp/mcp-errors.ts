import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ErrorKind } from '../../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../errors';
import { shortened } from '../../pipeline/bound-result';
import { fromTransportError, parseRetryAfter, waitThenRetry } from '../http-errors';
import { answerTooLargeBound } from './mcp-answer-stand-in';

/** A classified MCP failure, and whether the connection should be replaced because of it. */
export interface McpFailure {
  readonly error: DispatchError;
  readonly broken: boolean;
}

/** The server is not connected (down, or reconnecting): nothing was sent. */
export function notConnectedError(server: string): DispatchError {
  return new DispatchError(ErrorKind.UNAVAILABLE, `MCP server "${server}" is not connected (it is down or reconnecting); the call was not executed`, {
    phase: 'before',
    recoverable: true,
  });
}

/**
 * The answer to a call (a JSON body, or an event of the SSE stream answering it) exceeded the
 * bound on what is read (RequestScopedFetchOptions.maxAnswerBytes): the server ran the call, and
 * its answer was not read. A retry would get the same answer.
 */
export function answerTooLargeError(server: string, maxBytes: number, cause?: unknown): DispatchError {
  return new DispatchError(ErrorKind.UNEXPECTED, `the answer of MCP server "${server}" exceeded ${maxBytes} bytes (limits.max_tool_output_chars x 4); it was not read`, {
    phase: 'during',
    recoverable: false,
    cause,
  });
}

/** An event of the server's GET stream exceeded the bound on what is read: the stream is dropped. */
export function eventTooLargeError(server: string, maxBytes: number): Error {
  return new Error(`an event of MCP server "${server}" exceeded ${maxBytes} bytes (limits.max_tool_output_chars x 4); it was not read`);
}

/**
 * The server answered a POST with HTTP 429: as an HTTP tool's 429 (fromHttpStatus), a refusal to
 * run at all (BEFORE, a side-effecting call's claim given back), retried after `retryAfter` (the
 * Retry-After header) when that is within the tool's max_backoff_ms. Thrown by the fetch
 * (createRequestScopedFetch), which alone sees the header; the SDK hands it to the call as it is.
 * Not a fault of the server: no breaker counts it (a TOOL_ERROR below 500) and the connection stays.
 */
export function rateLimitedError(server: string, retryAfter: string | null): DispatchError {
  const retryAfterMs = parseRetryAfter(retryAfter);
  return new DispatchError(ErrorKind.TOOL_ERROR, `MCP server "${server}" answered HTTP 429 (too many requests); the call was not executed`, {
    phase: 'before',
    recoverable: true,
    httpStatus: 429,
    retryAfterMs,
    suggestion: waitThenRetry(retryAfterMs),
  });
}

/** The server answered the call with `isError`: the tool ran and reported a failure. */
export function mcpToolError(server: string, tool: string, text: string): DispatchError {
  // Never through a surrogate pair (see fromHttpStatus).
  const excerpt = shortened(text, 2_000);
  return new DispatchError(ErrorKind.TOOL_ERROR, `MCP tool "${tool}" on server "${server}" reported an error: ${excerpt || 'no message'}`, { phase: 'after', recoverable: false });
}

/** The most of a drop's reason a call lost on the dropped connection is told (it may quote the server). */
const MAX_DROP_REASON_CHARS = 500;
/** Why each client dispatch dropped was dropped: the calls lost on it say so. */
const dropReasons = new WeakMap<object, string>();

/** Notes why `client` was dropped (the first reason given), for the calls it fails (classifyMcpError). */
export function noteDropped(client: object, why: string): void {
  if (!dropReasons.has(client)) dropReasons.set(client, shortened(why, MAX_DROP_REASON_CHARS));
}

/**
 * Translates what the MCP SDK throws, in one place: a lost connection is DURING (saying why, when
 * dispatch dropped `client`, the connection the call was sent on: noteDropped); a request that
 * never left (not connected, refused, unknown session) is BEFORE; a JSON-RPC error answered by
 * the server is AFTER (the server handled the request and said no), but for the stand-in the fetch
 * gives for an answer too large to read (answerTooLargeResponse), which is answerTooLargeError.
 * `reached: false`: the request never reached the server (its POST had no connected socket), so
 * any failure is BEFORE.
 */
export function classifyMcpError(error: unknown, server: string, target: string, client?: object, reached?: boolean): McpFailure {
  const failure = classifyThrown(error, server, target, client);
  if (reached !== false || failure.error.phase === 'before') return failure;
  // Its POST never had a connected socket (SentHooks): whatever ended it, the server never saw it.
  const notSent = new DispatchError(ErrorKind.UNAVAILABLE, `could not reach MCP server "${server}": ${failure.error.message}; nothing was sent to it`, { phase: 'before', recoverable: true, cause: error });
  return { error: notSent, broken: failure.broken };
}

/**
 * The texts of the errors the SDK makes itself with the codes it shares with servers (-32000 a
 * connection closed or a request cancelled, -32001 a request timed out): the same codes answered
 * by a server (-32000 is JSON-RPC's first "server error", the one servers use most) were read as
 * a lost connection, the server dropped and a side-effecting call's outcome told unknown, or as a
 * timeout. An answered error is the server's, AFTER, whatever its code.
 */
const SDK_TEXTS = new Set(['Connection closed', 'Request was cancelled', 'Request timed out', 'Maximum total timeout exceeded']);
const sdkOwn = (error: McpError) => SDK_TEXTS.has(error.message.replace(/^MCP error -?\d+: /, ''));

function classifyThrown(error: unknown, server: string, target: string, client?: object): McpFailure {
  if (error instanceof DispatchError) return { error, broken: false };
  if (error instanceof McpError) {
    const maxBytes = answerTooLargeBound(error);
    if (maxBytes !== undefined) return { error: answerTooLargeError(server, maxBytes, error), broken: false };
    if (error.code === ErrorCode.ConnectionClosed && sdkOwn(error)) {
      const why = client && dropReasons.get(client);
      return { error: new DispatchError(ErrorKind.UNAVAILABLE, `the connection to MCP server "${server}" was lost mid-request${why ? ` (${why})` : ''}`, { phase: 'during', recoverable: true, cause: error }), broken: true };
    }
    if (error.code === ErrorCode.RequestTimeout && sdkOwn(error)) {
      return { error: new DispatchError(ErrorKind.TIMEOUT, `MCP server "${server}" did not answer in time`, { phase: 'during', recoverable: true, cause: error }), broken: false };
    }
    const recoverable = error.code === ErrorCode.InternalError;
    // The SDK prefixes `MCP error <code>: ` to a message a server's own McpError had prefixed already.
    const said = error.message.replace(/^(MCP error -?\d+: )\1+/, '$1');
    return { error: new DispatchError(ErrorKind.TOOL_ERROR, `MCP server "${server}" answered an error: ${said}`, { phase: 'after', recoverable, cause: error }), broken: false };
  }
  if (error instanceof StreamableHTTPError) {
    const status = error.code ?? 0;
    if (status === 404) {
      return { error: new DispatchError(ErrorKind.UNAVAILABLE, `MCP server "${server}" no longer knows this session; reconnecting`, { phase: 'before', recoverable: true, cause: error }), broken: true };
    }
    if (status < 400 || status > 599) {
      // Not an HTTP refusal (the SDK reports an answer it could not read, such as a 200 of the
      // wrong content type, as -1): the server may have run the tool.
      return { error: new DispatchError(ErrorKind.UNAVAILABLE, `MCP server "${server}" answered in a way that could not be read: ${error.message}`, { phase: 'during', recoverable: true, cause: error }), broken: true };
    }
    // A 408 is the server (or a proxy) giving up waiting for the request, as a 504 is a gateway's:
    // transient, and like a 5xx the tool may have run (an HTTP tool's 408 is after it ran too), so a
    // side-effecting call is not retried. A 429 to a POST is rateLimitedError, thrown by the fetch.
    const mayHaveRun = status >= 500 || status === 408;
    return {
      error: new DispatchError(ErrorKind.UNAVAILABLE, `MCP server "${server}" answered HTTP ${status} to the request`, { phase: mayHaveRun ? 'during' : 'before', recoverable: mayHaveRun || status === 429, cause: error, httpStatus: status }),
      broken: status >= 500,
    };
  }
  if (error instanceof Error && /not connected/i.test(error.message)) return { error: notConnectedError(server), broken: true };
  if (error instanceof TypeError || hasErrnoCode(error)) return { error: fromTransportError(error, target), broken: true };
  return { error: DispatchError.from(error, 'after'), broken: false };
}

function hasErrnoCode(error: unknown): boolean {
  for (let current = error, depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    if (typeof (current as { code?: unknown }).code === 'string') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

const STREAM_LOSS = /^(SSE stream disconnected|Failed to reconnect SSE stream|Maximum reconnection attempts)/;

/**
 * Whether an error the Streamable HTTP transport reports (it has no codes) means a response stream
 * was cut: the requests waiting on it would never be answered, so the connection is replaced and
 * they fail DURING.
 */
export function isStreamLoss(error: Error): boolean {
  return STREAM_LOSS.test(error.message);
}
