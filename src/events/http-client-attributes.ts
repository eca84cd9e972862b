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
 * secrets in the path are redacted as in results (`redactSecrets`: a Slack or Discord webhook's
 * URL is its secret, `/services/[REDACTED:slack_token]`), and the fragment, never sent, is left
 * out. Undefined when `url` is no absolute URL.
 */
export function redactedUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const credentials = parsed.username !== '' || parsed.password !== '' ? `${REDACTED}:${REDACTED}@` : '';
  const search = parsed.search === '' ? '' : `?${redactedQuery(parsed.search)}`;
  // The host with the path: the redactor knows a webhook by both (`hooks.slack.com/services/...`).
  return `${parsed.protocol}//${credentials}${redactSecrets(`${parsed.host}${parsed.pathname}`)}${search}`;
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
