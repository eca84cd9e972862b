/**
 * Numbers in arguments text that JSON.parse would change: an integer beyond ±2^53 that no double
 * holds exactly (1234567890123456789 becomes 1234567890123456800), or a number too large for any
 * double (1e999 becomes Infinity, which JSON.stringify sends on as null). Passed on, the tool
 * would act on another value than the model sent (another record's id), and two calls with
 * different ids would share an idempotency key: the second would be answered by the first's
 * replay. Decimals that lose their last digits to rounding are ordinary floating point, not this.
 */

/** Cheap screen: only a run of 16 digits or a 3-digit exponent can hold such a number. */
const SUSPECT = /\d{16}|[eE][+]?\d{3}/;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The first number token of JSON `text` whose value JSON.parse would not keep, or undefined. */
export function inexactNumber(text: string): string | undefined {
  if (!SUSPECT.test(text)) return undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip a string, escapes included.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) continue;
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(text);
    if (!match) continue;
    const token = match[0];
    i += token.length - 1;
    if (!changedByParse(token)) continue;
    return token;
  }
  return undefined;
}

/**
 * True when the tool would not get the token's text back: a number no double holds, or an integer
 * of 16 digits or more whose double prints otherwise (fewer digits are below 2^53: exact). The
 * text is what counts, as the tool reads it: 123456789012345680000 comes back as it was sent.
 */
function changedByParse(token: string): boolean {
  const value = Number(token);
  if (!Number.isFinite(value)) return true;
  if (/[.eE]/.test(token) || token.length - (token.charCodeAt(0) === 0x2d ? 1 : 0) < 16) return false;
  return String(value) !== token;
}
