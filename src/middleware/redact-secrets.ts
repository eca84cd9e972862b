import { shannonEntropy } from './entropy';
import { SECRET_PATTERNS, type SecretKind } from './secret-patterns';

/** Options of {@link redactSecrets}. */
export interface RedactionOptions {
  /** Shortest run of token characters checked for entropy. @default 32 */
  readonly minEntropyLength?: number;
  /**
   * Share of the highest entropy a string of its length could have above which it counts as a
   * secret: bits per character >= factor x log2(min(length, 64)). @default 0.8
   */
  readonly entropyFactor?: number;
}

const marker = (kind: SecretKind) => `[REDACTED:${kind}]`;
const PEM_BEGIN = '-----BEGIN ';
const PEM_BODY = /[A-Za-z0-9+/=\s\\]/;
const MAX_PEM_LABEL = 64;

/** PEM private key blocks, found with indexOf so that the scan stays linear. */
function redactPem(text: string): string {
  let begin = text.indexOf(PEM_BEGIN);
  if (begin < 0) return text;
  let out = '';
  let from = 0;
  let endsLeft = true;
  while (begin >= 0) {
    const labelEnd = text.indexOf('-----', begin + PEM_BEGIN.length);
    const label = labelEnd < 0 ? '' : text.slice(begin + PEM_BEGIN.length, labelEnd);
    if (labelEnd < 0 || label.length > MAX_PEM_LABEL || !label.endsWith('PRIVATE KEY')) {
      begin = text.indexOf(PEM_BEGIN, begin + PEM_BEGIN.length);
      continue;
    }
    let stop = labelEnd + 5;
    const end = endsLeft ? text.indexOf('-----END ', stop) : -1;
    if (end >= 0) {
      const close = text.indexOf('-----', end + 9);
      stop = close >= 0 && close - end <= MAX_PEM_LABEL + 9 ? close + 5 : end + 9;
    } else {
      endsLeft = false;
      while (stop < text.length && PEM_BODY.test(text[stop]!)) stop++;
    }
    out += text.slice(from, begin) + marker('private_key');
    from = stop;
    begin = text.indexOf(PEM_BEGIN, stop);
  }
  return out + text.slice(from);
}

const TOKEN_CHARS = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_=-') TOKEN_CHARS[c.charCodeAt(0)] = 1;
const isToken = (code: number) => code < 128 && TOKEN_CHARS[code] === 1;

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
  return shannonEntropy(text, start, end) >= factor * Math.log2(Math.min(end - start, 64));
}

/** Long high-entropy runs of token characters, found by one scan over the text. */
function redactHighEntropy(text: string, minLength: number, factor: number): string {
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
    if (i - start >= minLength && looksRandom(text, start, i, factor)) {
      out += text.slice(from, start) + marker('high_entropy');
      from = i;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * Every pattern in one, case-insensitive: a superset of their matches, so one scan tells whether
 * any pattern can match and most texts, which hold no secret, skip the ten replacing scans.
 */
const ANY_SECRET_PATTERN = new RegExp(SECRET_PATTERNS.map((p) => `(?:${p.regex.source})`).join('|'), 'i');

/** Each pattern's replacement as a string (`$1[REDACTED:kind]`): no callback per match. */
const REPLACEMENTS = SECRET_PATTERNS.map(({ kind, keep }) => Array.from({ length: keep }, (_, g) => `$${g + 1}`).join('') + marker(kind));

/**
 * Replaces secrets in `text` with `[REDACTED:kind]`: private keys, JWTs, GitHub and Slack tokens,
 * AWS keys, API keys (`sk-...`, `api_key=...`), bearer and other authorization headers, values of
 * password and token fields, then long high-entropy strings. Hex strings (hashes, UUIDs) and
 * path-like strings are kept. Every step is linear in the length of `text`.
 */
export function redactSecrets(text: string, options: RedactionOptions = {}): string {
  if (text.length < 8) return text;
  const minLength = options.minEntropyLength ?? 32;
  const factor = options.entropyFactor ?? 0.8;
  let out = redactPem(text);
  if (ANY_SECRET_PATTERN.test(out)) {
    for (let i = 0; i < SECRET_PATTERNS.length; i++) {
      const { regex } = SECRET_PATTERNS[i]!;
      regex.lastIndex = 0;
      out = out.replace(regex, REPLACEMENTS[i]!);
    }
  }
  return redactHighEntropy(out, minLength, factor);
}
