/**
 * Numbers in arguments text that JSON.parse would change: an integer beyond ±2^53 that no double
 * holds exactly (1234567890123456789 becomes 1234567890123456800), or a number too large for any
 * double (1e999 becomes Infinity, which JSON.stringify sends on as null). Passed on, the tool
 * would act on another value than the model sent (another record's id), and two calls with
 * different ids would share an idempotency key: the second would be answered by the first's
 * replay. Decimals that lose their last digits to rounding are ordinary floating point, not this.
 */

/**
 * Cheap screen: only a number with 16 or more digits (a point may sit among them:
 * 9007199254740.993e3) or with an exponent can hold such a number. Any exponent, as it may take
 * a decimal's digits past 2^53 (9.007199254740993e15).
 */
const SUSPECT = /\d(?:\.?\d){15}|[\d.][eE][+-]?\d/;
const NUMBER = /-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;

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

/** 2^53: below it every integer is a double; at or above it every double is an integer. */
const EXACT_LIMIT = 2 ** 53;
const PARTS = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** A number's significant digits and decimal exponent, `-123e4` for -1.23e6: equal for equal values. */
function significant(text: string): string {
  const [, sign, whole, fraction = '', exponent = '0'] = PARTS.exec(text)!;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  const kept = digits.replace(/0+$/, '');
  return `${sign}${kept}e${Number(exponent) - fraction.length + (digits.length - kept.length)}`;
}

/**
 * True when the tool would not get the token's value: a number no double holds (1e999, Infinity;
 * 1e-999, 0), or one of 2^53 or more whose digits the double does not keep, however it is spelt
 * (1234567890123456789, 1234567890123456789.0, 1.234567890123456789e18). Below 2^53 a decimal's
 * rounding is ordinary floating point and an integer is exact; above it, a number the double
 * prints with the same digits (1e300, 123456789012345680000, 1000000000000000000000) is the
 * number the model meant.
 */
function changedByParse(token: string): boolean {
  const value = Number(token);
  if (!Number.isFinite(value)) return true;
  if (value === 0) return /[1-9]/.test(token.replace(/[eE].*$/, ''));
  if (Math.abs(value) < EXACT_LIMIT) return false;
  return significant(token) !== significant(String(value));
}

/** Why `token` (from `inexactNumber`) is refused, as an INVALID_ARGUMENTS message says it. */
export function inexactNumberProblem(token: string): string {
  const shown = token.length > 40 ? `${token.slice(0, 40)}...` : token;
  return `the number ${shown} in the arguments cannot be passed on exactly (integers beyond ±9007199254740991 and numbers beyond ±1.8e308 would change)`;
}
