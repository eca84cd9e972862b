import { outsidePublicPem } from './public-pem';
import { redactHighEntropy } from './entropy';
import { PREFIXED_TOKEN_MIN_LENGTH } from './secret-token-formats';
import { hidesWrappedBase64, rewrapped, wrappedBase64 } from './wrapped-base64';
import { redactSecretManifests } from './secret-manifests';
import { anyPatternMatches, holdsPatternLiteral } from './secret-prefilter';
import { looksLikeJson, redactJson, redactJsonLines, type JsonRedactor } from './redact-json';
import { isCode, isNegated, isNestedArray, isOpaqueKey, isPlainValue, isValuelessFlag, isWording } from './secret-context';
import { isPasswordKey, PASSWORD_MIN_CHARS, SECRET_KEYS, SECRET_MIN_CHARS, SECRET_PATTERNS, type SecretKind } from './secret-patterns';

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

const MARKER_START = '[REDACTED:';
export const marker = (kind: SecretKind) => `${MARKER_START}${kind}]`;
const PEM_BEGIN = '-----BEGIN ';
const PEM_BODY = /[A-Za-z0-9+/=\s]/;
const MAX_PEM_LABEL = 64;
/** A private key's label: PEM's (`RSA PRIVATE KEY`, `PRIVATE KEY`...) or OpenPGP's armor (`PGP PRIVATE KEY BLOCK`). */
const PRIVATE_LABEL = /PRIVATE KEY(?: BLOCK)?$/;

/** End of a PEM body from `i`: base64, whitespace, and `\n`, `\r`, `\t` escaped (in a JSON string). */
function pemBodyEnd(text: string, i: number): number {
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\' && 'nrt'.includes(text[i + 1] ?? '-')) i += 2;
    else if (c !== '\\' && PEM_BODY.test(c)) i++;
    else break;
  }
  return i;
}

/**
 * PEM private key blocks, OpenPGP's armored ones too, found with indexOf so that the scan stays
 * linear. A block runs to its END line, or without one (cut short) to the end of its base64; an
 * END past a double quote is not its own (the block is in a JSON string and the END in another),
 * so JSON stays JSON.
 */
function redactPem(text: string): string {
  let begin = text.indexOf(PEM_BEGIN);
  if (begin < 0) return text;
  let out = '';
  let from = 0;
  let end = -2;
  let quote = text.indexOf('"', begin);
  while (begin >= 0) {
    const labelEnd = text.indexOf('-----', begin + PEM_BEGIN.length);
    const label = labelEnd < 0 ? '' : text.slice(begin + PEM_BEGIN.length, labelEnd);
    if (labelEnd < 0 || label.length > MAX_PEM_LABEL || !PRIVATE_LABEL.test(label)) {
      begin = text.indexOf(PEM_BEGIN, begin + PEM_BEGIN.length);
      continue;
    }
    let stop = labelEnd + 5;
    // Both searches move forward only (-1: none left), so that the scan stays linear.
    if (quote >= 0 && quote < stop) quote = text.indexOf('"', stop);
    if (end !== -1 && end < stop) end = text.indexOf('-----END ', stop);
    if (end >= 0 && (quote < 0 || quote > end)) {
      const close = text.indexOf('-----', end + 9);
      stop = close >= 0 && close - end <= MAX_PEM_LABEL + 9 ? close + 5 : end + 9;
    } else {
      stop = pemBodyEnd(text, stop);
    }
    out += text.slice(from, begin) + marker('private_key');
    from = stop;
    begin = text.indexOf(PEM_BEGIN, stop);
  }
  return out + text.slice(from);
}

const OPENS: Readonly<Record<string, string>> = { ')': '(', ']': '[', '}': '{' };

/**
 * Length of the start of `value` before its first closing bracket that closes nothing in it, or
 * before a marker of an earlier redaction.
 */
function valueLength(value: string): number {
  const open: string[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '[' && value.startsWith(MARKER_START, i)) return i;
    if (c === '(' || c === '[' || c === '{') open.push(c);
    else if (OPENS[c] !== undefined && open.pop() !== OPENS[c]) return i;
  }
  return value.length;
}

/** A key whose value is on the next line (secret-forms.ts, `NEXT_LINE`). */
const NEXT_LINE_KEY = /\n[ \t]*["']?$/;

/** What must follow such a value: its line's end, after its closing quote if it has one. */
const LINE_END = /^["']?[ \t]*(?:\r?\n|$)/;

/** A key whose value is on the next line, the line break escaped (secret-forms.ts, `ESCAPED_NEXT_LINE`). */
const ESCAPED_NEXT_LINE_KEY = /\\n(?:[ \t]|\\t)*(?:\\?["'])?$/;

/** What must follow such a value: an escaped line break or its string's end, after its closing quote if it has one. */
const ESCAPED_LINE_END = /^(?:\\?["'])?(?:[ \t]|\\t){0,16}(?:\\[rn]|["']|$)/;

/** Length of the start of `value` before its first escaped line break or tab (`\n`, `\r`, `\t`; `\\n` is a backslash and an n). */
function escapedLineLength(value: string): number {
  for (let i = value.indexOf('\\'); i >= 0; i = value.indexOf('\\', i + 2)) {
    if ('nrt'.includes(value[i + 1] ?? '-')) return i;
  }
  return value.length;
}

/**
 * A key-value match: the key stays, the value is redacted up to a closing bracket it did not open
 * (`{"token":12345678}` keeps its `}`) or an earlier marker, unless it is shorter than the key's
 * floor or no secret (a reference, a path, a placeholder, a word, code, print_r's nested array,
 * on the next line anything but the whole line, its line break escaped or not; under a password's
 * key the start of wording, the status after a negated key, or what follows a flag that takes no
 * value: secret-context.ts). A value after a quoted key without a quote of its own (a JSON
 * number) becomes a quoted marker, so that JSON stays JSON.
 */
function replaceKeyed(kind: SecretKind, password: boolean) {
  const min = password ? PASSWORD_MIN_CHARS : SECRET_MIN_CHARS;
  const hidden = marker(kind);
  return (match: string, key: string, whole: string, offset: number, text: string): string => {
    // The value group takes an escape as one character, so an escaped line break too: cut there.
    const escaped = key.includes('\\n') && ESCAPED_NEXT_LINE_KEY.test(key);
    const end = escaped ? Math.min(valueLength(whole), escapedLineLength(whole)) : valueLength(whole);
    const value = whole.slice(0, end);
    const valueEnd = offset + key.length + end;
    if (end < min || isPlainValue(key, value) || isCode(text, offset, key, value, valueEnd) || isNestedArray(text, key, value, valueEnd)) return match;
    const lineEnd = escaped ? ESCAPED_LINE_END : NEXT_LINE_KEY.test(key) ? LINE_END : undefined;
    if (lineEnd !== undefined && (value.endsWith(':') || !lineEnd.test(text.slice(valueEnd, valueEnd + 64)))) return match;
    if (password && (isWording(text, key, value, offset + match.length) || isNegated(text, offset) || isValuelessFlag(text, offset, key))) return match;
    return key + (/["']\s*:\s*$/.test(key) ? `"${hidden}"` : hidden) + whole.slice(end);
  };
}

/** A quoted value after a password's key: redacted whole when it holds a space and is no reference (`$HOME dir`...). */
function replaceQuoted(kind: SecretKind) {
  return (match: string, key: string, _quote: string, value: string): string => (/\s/.test(value) && !isPlainValue(key, value) ? key + marker(kind) : match);
}

/**
 * A value before its key's name (`<add value="..." key="Password"/>`): redacted as the key names
 * it (`keyKind`: the name must end with it), unless short, no secret or wording.
 */
function replaceValueFirst(match: string, attribute: string, value: string, name: string, offset: number, text: string): string {
  const kind = keyKind(name);
  const password = isPasswordKey(name);
  if (kind === undefined || value.length < (password ? PASSWORD_MIN_CHARS : SECRET_MIN_CHARS) || isPlainValue(name, value)) return match;
  return password && isWording(text, attribute, value, offset + match.length) ? match : attribute + marker(kind);
}

/** A password after a short flag (`sshpass -p`) or a .pgpass line's fields: redacted unless a reference or a placeholder. */
const replacePasswordAfter = (match: string, before: string, value: string): string => (isPlainValue('password', value) ? match : before + marker('secret'));

/** Each pattern's replacement: a string (`$1[REDACTED:kind]`, no callback per match) unless it reads its match. */
const REPLACEMENTS = SECRET_PATTERNS.map(({ kind, keep, keyed, password, quoted, valueFirst, passwordAfter }) => {
  if (keyed) return replaceKeyed(kind, password === true);
  if (quoted) return replaceQuoted(kind);
  if (valueFirst) return replaceValueFirst;
  if (passwordAfter) return replacePasswordAfter;
  return Array.from({ length: keep }, (_, g) => `$${g + 1}`).join('') + marker(kind);
});

/** How deep JSON inside JSON strings is redacted as JSON; deeper, as text. */
const MAX_JSON_DEPTH = 4;

/** The entropy step's settings; `minLength` Infinity leaves it out. */
interface EntropySettings {
  readonly minLength: number;
  readonly factor: number;
}

/** Markers made once, not per text. */
const SECRET_MARKER = marker('secret');
const HIGH_ENTROPY_MARKER = marker('high_entropy');
const TOKEN_MARKER = marker('api_key');

function redactText(text: string, entropy: EntropySettings): string {
  let out = redactSecretManifests(redactPem(text), SECRET_MARKER);
  // A text holding no pattern's literal skips every pattern's scan (secret-prefilter.ts).
  const any = holdsPatternLiteral(out) ? anyPatternMatches(out) : undefined;
  for (let i = 0; any !== undefined && i < SECRET_PATTERNS.length; i++) {
    const { regex, words } = SECRET_PATTERNS[i]!;
    if (words === undefined ? !any : !words.test(out)) continue;
    const replacement = REPLACEMENTS[i]!;
    regex.lastIndex = 0;
    out = typeof replacement === 'string' ? out.replace(regex, replacement) : out.replace(regex, replacement);
  }
  // Shorter than its runs' bound, or than any token told by its prefix (secret-token-formats.ts).
  if (entropy.minLength === Infinity || out.length < Math.min(entropy.minLength, PREFIXED_TOKEN_MIN_LENGTH)) return out;
  // A certificate's body stays (public-pem.ts); most texts hold no PEM block and skip the split.
  if (!out.includes('-----BEGIN ')) return redactHighEntropy(out, entropy.minLength, entropy.factor, HIGH_ENTROPY_MARKER, TOKEN_MARKER);
  return outsidePublicPem(out, (part) => redactHighEntropy(part, entropy.minLength, entropy.factor, HIGH_ENTROPY_MARKER, TOKEN_MARKER));
}

/** The kind of secret a key names (`password`, `api_key`, `DB_PASSWORD`...), if it names one. */
export function keyKind(key: string): SecretKind | undefined {
  if (key.length > 256) return undefined;
  return SECRET_KEYS.find(({ name }) => name.test(key))?.kind;
}

/**
 * A scheme and its credentials, as an Authorization header holds them (`Basic dXNl...`): in JSON
 * the key and the value are apart, so the text pattern that reads the key before `Basic` misses it.
 */
const AUTH_SCHEME = /^([A-Za-z][A-Za-z0-9-]{0,31} +)[A-Za-z0-9._~+/-]{6,4096}={0,3}$/;

/**
 * A whole value under a key named like a secret, as the text patterns take it: no space, 8+
 * characters (a password's from 1); under an Authorization key, the credentials after a scheme.
 * After a flag in a list (`["--passphrase", "correct horse"]`), spaces too: its words are one value.
 * A value is read without the whitespace around it, which stays (`"\n  hunter2\n"` ->
 * `"\n  [REDACTED:secret]\n"`, `{"token":"\n  abcd1234efgh5678"}` too): one word is a secret,
 * more are wording.
 */
function secretValue(key: string, kind: SecretKind, value: string, listed = false): string | undefined {
  const password = isPasswordKey(key);
  const start = listed ? 0 : value.length - value.trimStart().length;
  const end = listed ? value.length : Math.max(start, value.trimEnd().length);
  const word = value.slice(start, end);
  if (word.length < (password ? PASSWORD_MIN_CHARS : SECRET_MIN_CHARS) || word.includes(MARKER_START)) return undefined;
  const scheme = kind === 'authorization' ? AUTH_SCHEME.exec(word)?.[1] : undefined;
  if (scheme !== undefined) return value.slice(0, start) + scheme + marker(/^bearer /i.test(scheme) ? 'bearer' : 'authorization') + value.slice(end);
  if ((!listed && /\s/.test(word)) || isPlainValue(key, word)) return undefined;
  return value.slice(0, start) + marker(kind) + value.slice(end);
}

/**
 * What can hide a secret from the text patterns, which read it as written: a JSON escape, `\/`
 * (PHP's json_encode writes every `/` so: `postgres:\/\/admin:pw@db`) or `\uXXXX` (a key such as
 * `pass\u0077ord`), decoded as the JSON pass reads strings; or a string value after a quoted key
 * that opens with whitespace, escaped or not (`{"token":"\n  abcd1234efgh5678"}`: the text patterns
 * take a secret's value from its first character, only a password's after whitespace), which the
 * JSON pass reads trimmed.
 */
const HIDING_ESCAPE = /\\[u/]|"[ \t]{0,16}:[ \t]{0,16}"(?:[ \t]|\\[nrt])/;

/** Whether a line of text that is not one JSON document is worth reading as JSON. */
const hidesSecret = (line: string) => HIDING_ESCAPE.test(line);

/** The same, once the text pass found a secret in the text: a line any pattern may match, or hiding an escape. */
const mayHoldSecret = (line: string) => hidesSecret(line) || (holdsPatternLiteral(line) && anyPatternMatches(line));

/** Texts of one output that may fail to parse as JSON ({@link JsonRedactor.parseFailures}): ~5 ms of failures. */
const MAX_PARSE_FAILURES = 1000;

/** The shortest text that can hold a secret: a password's key and its value (`pwd=x`). */
const SHORTEST_SECRET = 'pwd='.length + PASSWORD_MIN_CHARS;

function redact(text: string, entropy: EntropySettings, depth: number, parseFailures: { left: number }): string {
  if (text.length < SHORTEST_SECRET) return text;
  // Wrapped base64 of text (GitHub's file contents): redacted as the text it holds (wrapped-base64.ts).
  const wrapped = depth < MAX_JSON_DEPTH ? wrappedBase64(text) : undefined;
  if (wrapped !== undefined) {
    const redacted = redact(wrapped.decoded, entropy, depth + 1, parseFailures);
    return redacted === wrapped.decoded ? text : rewrapped(redacted, wrapped.width, text);
  }
  const out = redactText(text, entropy);
  // Most outputs hold nothing to redact; only those that do, or hold an escape that can hide a
  // secret, a Kubernetes Secret or wrapped base64 (secret-manifests.ts, wrapped-base64.ts), are read
  // again as JSON: looked for only when the text pass changed nothing.
  if (depth >= MAX_JSON_DEPTH || (out === text && !HIDING_ESCAPE.test(text) && !text.includes('"Secret"') && !hidesWrappedBase64(text))) return out;
  const redactor: JsonRedactor = {
    keyKind,
    secretValue,
    redactString: (value, key) => redact(value, key !== undefined && isOpaqueKey(key) ? { ...entropy, minLength: Infinity } : entropy, depth + 1, parseFailures),
    parseFailures,
    manifestMarker: SECRET_MARKER,
  };
  const whole = looksLikeJson(text) ? redactJson(text, redactor) : undefined;
  if (whole !== undefined) return whole;
  // Not one JSON document (JSON lines, a log): its lines holding JSON are read as JSON when they
  // hide an escape or the text pass found a secret in the text (the text pass ends a value at `&`,
  // `,` or `;`, so `{"password":"p&ss"}` kept `&ss`; JSON reads the string whole), then the whole as
  // text again, for what spans lines (a PEM block) and the lines that are not JSON.
  const lines = redactJsonLines(text, redactor, out === text ? hidesSecret : mayHoldSecret);
  return lines === text ? out : redactText(lines, entropy);
}

/**
 * Replaces secrets in `text` with `[REDACTED:kind]`: private keys, JWTs, GitHub and Slack tokens,
 * AWS keys, API keys (`sk-...`, `api_key=...`), bearer and other authorization headers, values of
 * password fields (from one character) and token fields (from 8), then long high-entropy strings.
 * Kept: hex strings (hashes, UUIDs), paths, identifiers, integrity hashes, the values of
 * pagination and id keys, and placeholders, code and references after secret-named keys
 * (secret-context.ts). JSON stays valid JSON: an output that
 * parses is redacted value by value (strings inside strings too, when they are JSON), and so are
 * the lines of other text that hold JSON behind an escape. Every step is linear in the length of
 * `text`.
 */
export function redactSecrets(text: string, options: RedactionOptions = {}): string {
  const entropy = { minLength: options.minEntropyLength ?? 32, factor: options.entropyFactor ?? 0.8 };
  return redact(text, entropy, 0, { left: MAX_PARSE_FAILURES });
}
