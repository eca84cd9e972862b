import type { Attributes } from '@opentelemetry/api';
import { redactSecrets } from '../middleware';
import { ATTR } from './span-attributes';

/** What stands for credentials and query values in `url.full`, as the HTTP semantic conventions write it. */
export const REDACTED = 'REDACTED';

/** Each `key=value` of a query with its value REDACTED; a bare item (no `=`, perhaps a token) is REDACTED whole. */
const redactedQuery = (search: string): string =>
  search
    .slice(1)
    .split('&')
    .map((item) => {
      const eq = item.indexOf('=');
      return eq < 0 ? (item === '' ? item : REDACTED) : `${item.slice(0, eq)}=${REDACTED}`;
    })
    .join('&');

/**
 * `url` as `url.full` and logs may show it: a user name and password become `REDACTED:REDACTED`
 * (the conventions' form), every query value becomes `REDACTED` with its key kept (the conventions
 * list a few signature keys; a tool's URL carries API keys under any name, `?key=`, `?token=`),
 * the path past its first segment is `REDACTED`, as ListTools shows an operator's tool (a webhook's
 * secret, `/services/T0/B0/SECRET`, a token of no known pattern, `/hooks/3f9a...`), the host and
 * first segment are redacted as results are (`redactSecrets`: Telegram's `/bot123:TOKEN`), and the
 * fragment, never sent, is left out. With `wholePath` (an endpoint of the operator's own, such as
 * the OTLP exporter's `/v1/traces`), the whole path is kept, redacted as results are. Undefined
 * when `url` is no absolute URL.
 */
export function redactedUrl(url: string, wholePath = false): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const credentials = parsed.username !== '' || parsed.password !== '' ? `${REDACTED}:${REDACTED}@` : '';
  const search = parsed.search === '' ? '' : `?${redactedQuery(parsed.search)}`;
  // The host with the path: the redactor knows a token by what it follows (`api.telegram.org/bot...`).
  if (wholePath) return `${parsed.protocol}//${credentials}${redactSecrets(`${parsed.host}${parsed.pathname}`)}${search}`;
  const { first, more } = firstSegment(parsed.pathname);
  return `${parsed.protocol}//${credentials}${redactSecrets(`${parsed.host}${first}`)}${more ? `/${REDACTED}` : ''}${search}`;
}

/** A path's first segment (with its `/`; empty for none) and whether any follows. */
export function firstSegment(pathname: string): { first: string; more: boolean } {
  const segments = pathname.split('/').filter((s) => s !== '');
  return { first: segments.length === 0 ? '' : `/${segments[0]}`, more: segments.length > 1 };
}

/**
 * The HTTP client attributes of the OpenTelemetry semantic conventions an attempt of an HTTP tool
 * starts with: `http.request.method` (dispatch always POSTs), `url.full` (redactedUrl),
 * `server.address` (an IPv6 address without its brackets) and `server.port` (the scheme's default
 * when the URL names none). Made once per registered tool (attempt-target.ts); undefined for a URL
 * that does not parse. `http.response.status_code` is set when the attempt ends.
 */
export function httpClientAttributes(url: string): Attributes | undefined {
  const full = redactedUrl(url);
  if (full === undefined) return undefined;
  const { hostname, port, protocol } = new URL(url);
  return {
    [ATTR.httpMethod]: 'POST',
    [ATTR.urlFull]: full,
    [ATTR.serverAddress]: hostname.startsWith('[') ? hostname.slice(1, -1) : hostname,
    [ATTR.serverPort]: port !== '' ? Number(port) : protocol === 'https:' ? 443 : 80,
  };
}
