import { firstSegment } from '../events/http-client-attributes';
import { redactSecrets } from '../middleware';

/** What ListTools shows for a redacted value (a header's, a URL's query or path). */
export const REDACTED = '[redacted]';

/**
 * An HTTP tool's URL as ListTools shows it. Credentials in it become `redacted@`. A tool the caller
 * does not own (the operator's, listed to every tenant) shows only its origin and first path
 * segment: the rest of its path and its query are `[redacted]`, as an API key (`?key=...`) or a
 * webhook's secret (`/services/T0/B0/SECRET`) lives there, and a secret the first segment holds is
 * redacted as in results (Telegram's `/bot123:TOKEN`). A URL that does not parse (checked at
 * registration) is shown as it is for the owner, and as `[redacted]` to others.
 */
export function listedUrl(url: string, owned: boolean): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return owned ? url : REDACTED;
  }
  const credentials = parsed.username !== '' || parsed.password !== '';
  if (owned && !credentials) return url;
  const origin = `${parsed.protocol}//${credentials ? 'redacted@' : ''}${parsed.host}`;
  if (owned) return `${origin}${parsed.pathname}${parsed.search}${parsed.hash}`;
  const { first, more } = firstSegment(parsed.pathname);
  // Redacted as results are, with the host: a token may be the first segment (Telegram's `/bot123:TOKEN`).
  const shown = redactSecrets(`${parsed.host}${first}`).slice(parsed.host.length);
  return `${origin}${shown}${more ? `/${REDACTED}` : ''}${parsed.search === '' ? '' : `?${REDACTED}`}`;
}
