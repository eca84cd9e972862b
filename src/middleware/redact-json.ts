import type { SecretKind } from './secret-patterns';

/** Longest output redacted as JSON (value by value); a longer one is redacted as text. */
export const JSON_REDACTION_MAX_CHARS = 4 * 1024 * 1024;

/** What {@link redactJson} asks of the text redaction. */
export interface JsonRedactor {
  /** The kind of secret the value under `key` is, or undefined for an ordinary key. */
  keyKind(key: string): SecretKind | undefined;
  /** The value under `key`, named like a secret, or undefined to redact it as any other string. */
  secretValue(key: string, kind: SecretKind, value: string): string | undefined;
  /** A string (a key, or a value under `key` or in an array) with its secrets replaced. */
  redactString(value: string, key: string | undefined): string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isNumberChar = (c: number) => (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x45 || c === 0x65;

/** Index just past the string that starts with the quote at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    i += c === BACKSLASH ? 2 : 1;
  }
}

function nextNonSpace(text: string, from: number): number {
  while (from < text.length && isSpace(text.charCodeAt(from))) from++;
  return from;
}

/** Whether `text` starts (after whitespace) like a JSON object or array. */
export function looksLikeJson(text: string): boolean {
  const c = text.charCodeAt(nextNonSpace(text, 0));
  return c === 0x7b || c === 0x5b;
}

/**
 * Redacts a JSON document value by value, so that it stays the same JSON: each string is decoded,
 * redacted as text and, if that changed it, encoded again in its place; a string or number under
 * a key named like a secret becomes the string `"[REDACTED:kind]"`. Everything else (whitespace,
 * numbers, escapes of unchanged strings) is kept to the character. Returns undefined when `text`
 * is not JSON or longer than {@link JSON_REDACTION_MAX_CHARS}.
 */
export function redactJson(text: string, redactor: JsonRedactor): string | undefined {
  if (text.length > JSON_REDACTION_MAX_CHARS) return undefined;
  try {
    JSON.parse(text);
  } catch {
    return undefined;
  }
  let out = '';
  let from = 0;
  let key: string | undefined;
  let kind: SecretKind | undefined;
  const splice = (start: number, end: number, value: string) => {
    out += text.slice(from, start) + JSON.stringify(value);
    from = end;
  };
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      const raw = text.slice(i + 1, end - 1);
      const value: string = raw.includes('\\') ? JSON.parse(text.slice(i, end)) : raw;
      const isKey = text.charCodeAt(nextNonSpace(text, end)) === COLON;
      const secret = !isKey && key !== undefined && kind !== undefined ? redactor.secretValue(key, kind, value) : undefined;
      const replaced = secret ?? redactor.redactString(value, isKey ? undefined : key);
      if (replaced !== value) splice(i, end, replaced);
      key = isKey ? value : undefined;
      kind = isKey ? redactor.keyKind(value) : undefined;
      i = end;
    } else if (key !== undefined && kind !== undefined && isNumberChar(c)) {
      let end = i + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
      const replaced = redactor.secretValue(key, kind, text.slice(i, end));
      if (replaced !== undefined) splice(i, end, replaced);
      key = kind = undefined;
      i = end;
    } else {
      if (!isSpace(c) && c !== COLON) key = kind = undefined;
      i++;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}
