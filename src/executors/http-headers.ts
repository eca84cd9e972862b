import type { Headers } from 'undici';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import type { ExecutorContext } from './executor';
import { undici } from './undici-lazy';

/** An HTTP field name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What undici sends in a field value: tab, visible ASCII, space and Latin-1; no NUL, CR or LF. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/**
 * Hop-by-hop and framing fields, which the HTTP client owns: a configured Content-Length or
 * Transfer-Encoding breaks the framing of every call (undici hangs or refuses it), Host and
 * Proxy-* address another server than the URL's.
 */
const CLIENT_OWNED = new Set(['connection', 'content-length', 'expect', 'host', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const CLIENT_OWNED_LIST = 'connection, content-length, expect, host, keep-alive, proxy-*, te, trailer, transfer-encoding, upgrade';

const clientOwned = (name: string) => CLIENT_OWNED.has(name.toLowerCase()) || name.toLowerCase().startsWith('proxy-');

/**
 * Why an HTTP tool's configured headers (`http.headers`) cannot be sent, or undefined: a name that
 * is no HTTP token, a value with a character HTTP does not carry, a hop-by-hop or framing header,
 * or one name set twice in different case. Checked at registration, from the config file or RPC.
 */
export function httpHeadersProblem(headers: Readonly<Record<string, string>>): string | undefined {
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) return `http.headers name ${JSON.stringify(name)} is not a valid HTTP header name`;
    // undici copies a request's headers into a plain object by their names: `__proto__` (this case
    // exactly) set its prototype there and was never sent, without a word.
    if (name === '__proto__') return 'http.headers name "__proto__" is never sent by the HTTP client (it drops a header of exactly that name); write it in another case, such as "__Proto__" (header names ignore case)';
    if (clientOwned(name)) return `http.headers may not set ${JSON.stringify(name)}: hop-by-hop and framing headers (${CLIENT_OWNED_LIST}) belong to the HTTP client`;
    if (!FIELD_VALUE.test(value)) return `http.headers ${JSON.stringify(name)} has a value with a character HTTP headers cannot carry (a control character such as NUL, CR or LF, or one past U+00FF)`;
    const other = seen.get(name.toLowerCase());
    if (other !== undefined) return `http.headers sets one header twice: ${JSON.stringify(other)} and ${JSON.stringify(name)} (header names ignore case)`;
    seen.set(name.toLowerCase(), name);
  }
  return undefined;
}

/**
 * A call's request headers: the tool's configured ones, then dispatch's own (content-type,
 * idempotency-key, dispatch-tenant, traceparent, tracestate), which replace any configured under the same name in any case.
 * Headers refused at registration that a spec stored by an older version may still carry: the
 * client-owned ones are left out, an invalid one fails the call before anything is sent.
 */
export function requestHeaders(configured: Readonly<Record<string, string>>, ctx: ExecutorContext): Headers {
  const headers = new (undici().Headers)();
  for (const [name, value] of Object.entries(configured)) {
    if (clientOwned(name)) continue;
    try {
      headers.set(name, value);
    } catch {
      // undici's message quotes the value, a credential as often as not, which the model, the
      // tenant and the logs would read: this one names the header alone, and keeps no cause.
      const part = TOKEN.test(name) ? 'value' : 'name';
      throw new DispatchError(ErrorKind.UNEXPECTED, `the tool's configured header ${JSON.stringify(name)} cannot be sent (its ${part} has a character HTTP headers cannot carry); nothing was sent`, { phase: 'before' });
    }
  }
  headers.set('content-type', 'application/json');
  headers.set('idempotency-key', ctx.idempotencyKey);
  // Whose session `session_id` is (a security probe: two tenants' sessions of one id were one
  // session at a tool keeping per-session state); percent-encoded, as a header carries no Unicode.
  headers.set('dispatch-tenant', encodeURIComponent(ctx.tenant));
  const traceparent = ctx.traceparent;
  if (traceparent) headers.set('traceparent', traceparent);
  else headers.delete('traceparent');
  // W3C Trace Context: a service passing the context on passes `tracestate` with it (an
  // observability probe: vendors' entries and sampling thresholds were lost at dispatch).
  const tracestate = traceparent ? ctx.tracestate : undefined;
  if (tracestate) headers.set('tracestate', tracestate);
  else headers.delete('tracestate');
  return headers;
}

/**
 * A tool URL without its user info (`https://user:pass@host/`), which fetch refuses to send ("a URL
 * that includes credentials"), and the Basic authorization that user info stands for (as curl and
 * Node's http read it), or the URL as it is when it has none.
 */
export function urlCredentials(url: string): { readonly url: string; readonly authorization?: string } {
  if (!url.includes('@')) return { url };
  const parsed = new URL(url);
  if (parsed.username === '' && parsed.password === '') return { url };
  const authorization = `Basic ${Buffer.from(`${percentDecoded(parsed.username)}:${percentDecoded(parsed.password)}`).toString('base64')}`;
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.toString(), authorization };
}

/** User info as its owner wrote it: percent-decoded, or as it is when that is not valid UTF-8. */
function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
