import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import { shortened } from '../pipeline/bound-result';
import { listedUrl } from '../server/listed-url';
import { DestinationDeniedError } from './destination-denied';

const BEFORE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_INVALID_URL',
  // The TLS handshake failed (the certificate refused, or no TLS at the other end): no request
  // was sent. An expired certificate must not mark every side-effecting call's outcome unknown.
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/**
 * zlib's and brotli's decoding failures: the tool answered, with a body its Content-Encoding did
 * not describe (corrupt or cut gzip, deflate or br). A connection lost mid-body fails with the
 * socket's error instead.
 */
function undecodable(code: string): boolean {
  return code.startsWith('Z_') || code.startsWith('ERR__ERROR_FORMAT') || code.startsWith('ERR_BROTLI') || code === 'ERR_ZLIB_INITIALIZATION_FAILED';
}

/** The errors of `error`'s cause chain, itself first (at most 4). */
function* causes(error: unknown): Generator<object> {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

function causeCode(error: unknown): string | undefined {
  for (const current of causes(error)) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/**
 * Translates a Node/undici transport error into a DispatchError. `sent` says whether the request
 * was handed to a connected socket: when it was not, any error happened before the tool ran (a
 * DNS failure, a refused or unroutable connection, a closed client). When it was, or is not known,
 * the codes above are before, a body that cannot be decoded is UNEXPECTED after (the tool
 * answered), and resets and anything else during. A connection the destination policy refused is
 * BLOCKED (before, not retried).
 */
export function fromTransportError(error: unknown, target: string, sent?: boolean): DispatchError {
  if (error instanceof DispatchError) return error;
  // A URL is named as ListTools names an operator's tool to every tenant (the model and any tenant
  // calling it read this): no user info, query or path past its first segment, where credentials
  // live. A stdio MCP server's command line is named as it is.
  const url = /^https?:\/\//i.test(target) ? listedUrl(target, false) : target;
  const denied = [...causes(error)].find((c): c is DestinationDeniedError => c instanceof DestinationDeniedError);
  if (denied) {
    return new DispatchError(ErrorKind.BLOCKED, `dispatch refused to connect to the tool at ${url}: ${denied.message}; nothing was sent`, {
      phase: 'before',
      recoverable: false,
      cause: error,
      suggestion: "Do not retry this call: the operator's policy forbids this tool's address. Tell the user the tool cannot be reached.",
    });
  }
  const code = causeCode(error) ?? 'unknown';
  if (sent === false || BEFORE_CODES.has(code)) {
    return new DispatchError(ErrorKind.UNAVAILABLE, `could not reach the tool at ${url} (${code})`, {
      phase: 'before',
      recoverable: true,
      cause: error,
    });
  }
  if (undecodable(code)) {
    // It ran and answered: its answer broke the HTTP contract, as a non-JSON body of a
    // returns_json tool does (DESIGN section 11). After, so not retried, and a side-effecting
    // call's record keeps it rather than marking its outcome unknown.
    return new DispatchError(ErrorKind.UNEXPECTED, `the tool at ${url} answered, but its body could not be decoded as its Content-Encoding says (${code}); the answer is lost`, {
      phase: 'after',
      recoverable: false,
      cause: error,
    });
  }
  return new DispatchError(ErrorKind.UNAVAILABLE, `the connection to the tool at ${url} failed mid-request (${code})`, {
    phase: 'during',
    recoverable: true,
    cause: error,
  });
}

/**
 * The longest Retry-After taken as the tool gave it, in ms; a longer one is taken as this. Only
 * a wait within the tool's max_backoff_ms is waited (decideRetry): the rest is what the model is
 * told (retry_after_ms, a uint32), so it is kept as said up to an hour rather than cut to a minute.
 */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** Parses a Retry-After header (seconds or an HTTP date) into milliseconds, capped at an hour. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const ms = waitAsked(header.trim(), now);
  return ms !== undefined && Number.isFinite(ms) ? Math.min(Math.max(0, Math.round(ms)), MAX_RETRY_AFTER_MS) : undefined;
}

const MONTH = /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)/i;

/** The wait a Retry-After value asks, in ms from `now` (NaN or undefined: none read). */
function waitAsked(value: string, now: number): number | undefined {
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  // Two fields (a tool's and its proxy's) arrive joined by undici, "30, 30": the longest wait asked.
  if (/^[\d.\s]+(,[\d.\s]+)+$/.test(value)) return Math.max(...value.split(',').map((part) => Number(part) * 1000));
  // Only a text naming a month (every HTTP-date form does): V8's Date.parse reads "5, 5", "1 2" or
  // "in 5" as dates in 2001, a wait of 0.
  return MONTH.test(value) ? Date.parse(value) - now : undefined;
}

/**
 * Classifies a non-2xx answer: the tool ran and said no (AFTER); 408, 429, 5xx may succeed later
 * (a 408 is the server giving up waiting for the request, as a 504 is a gateway's: transient).
 * A 429 is a refusal to run at all ("too many requests": a rate limiter answers it before the
 * request is processed), so it is BEFORE: a side-effecting tool's claim is given back, and the
 * call is retried after Retry-After instead of replaying the 429 for the record's whole TTL. A 503
 * stays AFTER: proxies answer it for an upstream reset mid-request too, when the work may be done.
 */
export function fromHttpStatus(statusCode: number, body: string, retryAfter: string | null): DispatchError {
  // Never cut through a surrogate pair: a lone one in the message is "\ud83d" in the output JSON,
  // which a model's API refuses as invalid JSON, so the result could not be handed on.
  const excerpt = shortened(body, 500);
  const busy = statusCode === 429 || statusCode === 503;
  const retryAfterMs = busy ? parseRetryAfter(retryAfter) : undefined;
  return new DispatchError(ErrorKind.TOOL_ERROR, `the tool answered HTTP ${statusCode}${excerpt ? `: ${excerpt}` : ''}`, {
    phase: statusCode === 429 ? 'before' : 'after',
    recoverable: statusCode === 408 || statusCode === 429 || statusCode >= 500,
    httpStatus: statusCode,
    retryAfterMs,
    // Busy, not wrong: TOOL_ERROR's default told the model to correct its request.
    suggestion: busy ? waitThenRetry(retryAfterMs) : (STATUS_SUGGESTIONS[statusCode] ?? serverFailed(statusCode)),
  });
}

/**
 * The next step after a 408 or a 5xx (but 503, busy): the tool or its gateway failed, not the
 * request, so the arguments are not what to change (TOOL_ERROR's default leaves that open). A
 * side-effecting call's kept record replaces it (keptFailureSuggestion): the same call is replayed.
 */
function serverFailed(statusCode: number): string | undefined {
  if (statusCode !== 408 && (statusCode < 500 || statusCode > 599)) return undefined;
  return `The tool itself failed (HTTP ${statusCode}), not the request: do not change the arguments for it. Call it again later, unchanged, or use another tool meanwhile.`;
}

/** The second seed's next steps for the statuses that say what to check (`_error_suggestion`). */
const STATUS_SUGGESTIONS: Readonly<Record<number, string>> = {
  401: 'Authentication failed: the tool refused the credentials it was called with. Do not call it again with the same arguments; tell the user, or use another tool.',
  403: 'The tool refused this action to the credentials it was called with. Do not call it again with the same arguments; tell the user, or use another tool.',
  404: 'The requested resource was not found. Verify that the path, URL or identifier in the arguments is correct before calling again.',
};

/**
 * The next step after HTTP 429 or 503: the tool asked to be called later, in `retryAfterMs` when
 * it said (a wait longer than the tool's max_backoff_ms is not waited by dispatch: the model is
 * the one to call again then). A Retry-After parsed to MAX_RETRY_AFTER_MS may have asked for
 * longer (it is capped there), so that one reads "an hour or more", not the cap as if asked.
 */
export function waitThenRetry(retryAfterMs: number | undefined): string {
  if (retryAfterMs === undefined || retryAfterMs === 0) {
    return 'The tool is busy and asked to be called later; call it again after a short wait, unchanged, or use another tool meanwhile.';
  }
  if (retryAfterMs >= MAX_RETRY_AFTER_MS) {
    return `The tool is busy and asked to be called again in an hour or more (retry_after_ms ${MAX_RETRY_AFTER_MS} is the longest dispatch passes on); call it again no sooner, unchanged, or use another tool meanwhile.`;
  }
  const when = retryAfterMs < 1000 ? `${retryAfterMs} ms` : `${Math.ceil(retryAfterMs / 1000)} s`;
  return `The tool is busy and asked to be called again in ${when} (retry_after_ms); call it again then or later, unchanged, or use another tool meanwhile.`;
}
