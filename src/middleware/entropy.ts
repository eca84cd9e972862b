import { isPublicForm } from './public-forms';
import { isOpaqueKey, keyBefore } from './secret-context';
import { isPrefixedToken, PREFIXED_TOKEN_MIN_LENGTH } from './secret-token-formats';

const counts = new Uint32Array(128);

/** k x log2(k) for k below 256, so that a short run's entropy costs one Math call, not one a symbol. */
const K_LOG_K = Float64Array.from({ length: 256 }, (_, k) => (k === 0 ? 0 : k * Math.log2(k)));

/**
 * Shannon entropy, in bits per character, of `text[start, end)` (ASCII; other characters count
 * as one symbol): log2(n) - sum(k log2 k) / n over the symbols' counts k. Uses preallocated
 * tables: no allocation per call. (Math builtins are not inlined under jest's vm context: one
 * Math call a symbol made 1 MiB of short random tokens take ~280 ms there, ~50 ms under node.)
 */
export function shannonEntropy(text: string, start = 0, end = text.length): number {
  const n = end - start;
  if (n <= 0) return 0;
  counts.fill(0);
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    counts[c < 127 ? c : 127] += 1;
  }
  let sum = 0;
  for (let c = 0; c < 128; c++) {
    const k = counts[c]!;
    if (k !== 0) sum += k < 256 ? K_LOG_K[k]! : k * Math.log2(k);
  }
  return Math.log2(n) - sum / n;
}

const TOKEN_CHARS = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_=-') TOKEN_CHARS[c.charCodeAt(0)] = 1;
const isToken = (code: number) => code < 128 && TOKEN_CHARS[code] === 1;
const isLower = (c: number) => c >= 97 && c <= 122;
const isUpper = (c: number) => c >= 65 && c <= 90;
const VOWELS = new Uint8Array(128);
for (const c of 'aeiouyAEIOUY') VOWELS[c.charCodeAt(0)] = 1;

/** A run that looks like a random token: not path-like, letters and digits, entropy near the maximum. */
function looksRandom(text: string, start: number, end: number, factor: number): boolean {
  if (text.charCodeAt(start) === 47) return false;
  let slashes = 0;
  let letters = 0;
  let digits = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 47 && ++slashes > 2) return false;
    if (c >= 48 && c <= 57) digits++;
    else if ((c | 32) >= 97 && (c | 32) <= 122) letters++;
  }
  if (letters === 0 || digits === 0) return false;
  return shannonEntropy(text, start, end) >= factor * Math.log2(end - start < 64 ? end - start : 64);
}

/**
 * A long identifier rather than a token (AbstractSingletonProxyFactoryBean2Impl,
 * test_handles_utf8_strings): a digit at most every 16 characters, mostly lowercase, words of 4+
 * letters on average, 30% of them vowels. Of 20,000 random tokens of 32 characters none passed
 * in base62, base64 or base32, 15 in base36 (lowercase and digits); of 40, none (measured).
 */
function looksLikeWords(text: string, start: number, end: number): boolean {
  let letters = 0;
  let lower = 0;
  let vowels = 0;
  let digits = 0;
  let words = 0;
  let previous = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (isLower(c) || isUpper(c)) {
      letters++;
      if (isLower(c)) lower++;
      vowels += VOWELS[c]!;
      if (!(isLower(previous) || isUpper(previous)) || (isUpper(c) && isLower(previous))) words++;
    } else if (c >= 48 && c <= 57) digits++;
    previous = c;
  }
  return digits * 16 <= end - start && lower * 4 >= letters * 3 && letters >= words * 4 && vowels * 10 >= letters * 3;
}

/** An alphabet written out (`0123456789ABCDEFGHJKMNPQRSTVWXYZ`): most neighbours one apart. */
function isSequence(text: string, start: number, end: number): boolean {
  let steps = 0;
  for (let i = start + 1; i < end; i++) if (text.charCodeAt(i) - text.charCodeAt(i - 1) === 1) steps++;
  return steps * 2 >= end - start;
}

/** A Subresource Integrity value (npm's `sha512-...`): a hash, not a secret. */
const INTEGRITY = /^(?:sha(?:1|256|384|512)|md5)-/;

/**
 * Where the value starts in the run at `text[start, end)` when the run is `key=value` (a query
 * string's `next_token=...`; an `=` only at its end is base64 padding): after its first `=`;
 * otherwise `start`.
 */
function valueStart(text: string, start: number, end: number): number {
  // Searched within the run only: indexOf past it made many random runs quadratic.
  let eq = start + 1;
  while (eq < end && text.charCodeAt(eq) !== 61) eq++;
  return eq + 1 < end && text.charCodeAt(eq + 1) !== 61 ? eq + 1 : start;
}

/** The key of the random-looking run at `text[start, end)` whose value starts at `value`: before it, or inside it (`key=value`). */
const keyOf = (text: string, start: number, value: number): string => (value > start ? text.slice(start, value - 1) : keyBefore(text, start));

/** Whether the random-looking run at `text[start, end)`, its value from `value`, is a known kind of non-secret. */
function isKnownNonSecret(text: string, start: number, end: number, value: number): boolean {
  return (
    INTEGRITY.test(text.slice(start, start + 8)) ||
    looksLikeWords(text, start, end) ||
    isSequence(text, start, end) ||
    isOpaqueKey(keyOf(text, start, value)) ||
    isPublicForm(text, value, end)
  );
}

/**
 * Replaces long high-entropy runs of token characters with `marker`, found by one scan over the
 * text; a run that is `key=value` keeps its key (`X-Amz-Algorithm=[REDACTED:high_entropy]`, where
 * the whole run became the marker and a URL's parameter lost its name). Kept: runs shorter than
 * `minLength`, path-like or without both letters and digits, and those {@link isKnownNonSecret}
 * (identifiers, integrity hashes, alphabets, the values of keys such as `next_token`, `cursor`, `id`,
 * public keys and hashes by their form: public-forms.ts).
 * A run that is a token told by its prefix (`hf_...`, `key-` and hex: secret-token-formats.ts), or
 * whose value is (`MAILGUN=key-...`), becomes `tokenMarker` whatever its entropy.
 */
export function redactHighEntropy(text: string, minLength: number, factor: number, marker: string, tokenMarker: string): string {
  let out = '';
  let from = 0;
  let i = 0;
  while (i < text.length) {
    if (!isToken(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < text.length && isToken(text.charCodeAt(i))) i++;
    if (i - start >= PREFIXED_TOKEN_MIN_LENGTH && isPrefixedToken(text, start, i)) {
      out += text.slice(from, start) + tokenMarker;
      from = i;
      continue;
    }
    // After a variable's name (`MAILGUN_KEY=key-...`): a run starting with a capital, the others (hashes, base64...) not read for an `=`.
    const token = i - start >= PREFIXED_TOKEN_MIN_LENGTH && isUpper(text.charCodeAt(start)) ? valueStart(text, start, i) : start;
    if (token > start && isPrefixedToken(text, token, i)) {
      out += text.slice(from, token) + tokenMarker;
      from = i;
      continue;
    }
    if (i - start < minLength || !looksRandom(text, start, i, factor)) continue;
    const value = valueStart(text, start, i);
    if (isKnownNonSecret(text, start, i, value)) continue;
    out += text.slice(from, value) + marker;
    from = i;
  }
  return from === 0 ? text : out + text.slice(from);
}
