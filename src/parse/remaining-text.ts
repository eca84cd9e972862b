import { withoutEndTokens } from './end-tokens';
import type { ParseFormat } from './types';

/** Functionary v3.2's header of text for the user, and the same when the server's prompt held its `>>>`. */
const TO_USER = />>>all[ \t]*\r?\n/g;
const LEADING_TO_USER = /^all[ \t]*\r?\n/;

/**
 * The remaining text of a parse that returned calls of `format`, less what no user should read:
 * the end-of-turn tokens it ends in (see `withoutEndTokens`), and Functionary's `>>>all` headers
 * (the text after one is the user's, the header is not).
 */
export function tidyRemaining(remaining: string, format: ParseFormat): string {
  const text = format === 'functionary' ? remaining.replace(TO_USER, '').replace(LEADING_TO_USER, '').trim() : remaining;
  return withoutEndTokens(text);
}
