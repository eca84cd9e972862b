import type { SecretKind } from './secret-patterns';
import { secretManifestValues } from './secret-manifests';

/** Longest output redacted as JSON (value by value); a longer one is redacted as text. */
export const JSON_REDACTION_MAX_CHARS = 4 * 1024 * 1024;

/** What {@link redactJson} asks of the text redaction. */
export interface JsonRedactor {
  /** The kind of secret the value under `key` is, or undefined for an ordinary key. */
  keyKind(key: string): SecretKind | undefined;
  /**
   * The value under `key`, named like a secret, or undefined to redact it as any other string;
   * `listed`: the item after a flag `key` in a list (an argv), whose words are one value.
   */
  secretValue(key: string, kind: SecretKind, value: string, listed?: boolean): string | undefined;
  /** A string (a key, or a value under `key` or in an array) with its secrets replaced. */
  redactString(value: string, key: string | undefined): string;
  /**
   * How many more texts may fail to parse, shared by all of one output's redaction: each failure
   * costs a thrown SyntaxError (~5 µs), and 1 MiB of `{\/}` lines, or of strings like it, made
   * 175,000 of them (1 s). Past it, what would have been tried is redacted as text only.
   */
  readonly parseFailures: { left: number };
  /** What a value of a Kubernetes Secret's data becomes (secret-manifests.ts). */
  readonly manifestMarker: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isNumberChar = (c: number) => (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x45 || c === 0x65;

/** A flag (`--password`, `-token`, `--db-password`) whose name names a secret: that name and its kind. */
const FLAG = /^--?([\w-]{1,64})$/;

function flagOf(value: string, redactor: JsonRedactor): readonly [string, SecretKind] | undefined {
  const name = FLAG.exec(value)?.[1];
  const kind = name === undefined ? undefined : redactor.keyKind(name);
  return name === undefined || kind === undefined ? undefined : [name, kind];
}

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
 * a key named like a secret becomes the string `"[REDACTED:kind]"`, and so does a string in a list
 * after a flag naming one (`["--password", "hunter2"]`, an argv; not another flag). Everything
 * else (whitespace, numbers, escapes of unchanged strings) is kept to the character. Returns undefined when `text`
 * is not JSON, longer than {@link JSON_REDACTION_MAX_CHARS}, or past the redactor's parse failures.
 */
export function redactJson(text: string, redactor: JsonRedactor): string | undefined {
  if (text.length > JSON_REDACTION_MAX_CHARS || redactor.parseFailures.left <= 0) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    redactor.parseFailures.left--;
    return undefined;
  }
  // A Kubernetes Secret's data values, whatever their keys are named (secret-manifests.ts).
  const manifestValues = text.includes('"Secret"') ? secretManifestValues(parsed) : undefined;
  let out = '';
  let from = 0;
  let key: string | undefined;
  let kind: SecretKind | undefined;
  // A list item that is a flag naming a secret (`"--password"`): the next item, if a string, is its value.
  let flag: readonly [string, SecretKind] | undefined;
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
      const named = key !== undefined && kind !== undefined ? ([key, kind] as const) : flag;
      const listed = named === flag;
      const secret = !isKey && manifestValues?.has(value) ? redactor.manifestMarker : !isKey && named !== undefined && !value.startsWith('-') ? redactor.secretValue(named[0], named[1], value, listed) : undefined;
      const replaced = secret ?? redactor.redactString(value, isKey ? undefined : key);
      if (replaced !== value) splice(i, end, replaced);
      key = isKey ? value : undefined;
      kind = isKey ? redactor.keyKind(value) : undefined;
      flag = isKey ? undefined : flagOf(value, redactor);
      i = end;
    } else if (key !== undefined && kind !== undefined && isNumberChar(c)) {
      let end = i + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
      const replaced = redactor.secretValue(key, kind, text.slice(i, end));
      if (replaced !== undefined) splice(i, end, replaced);
      key = kind = flag = undefined;
      i = end;
    } else {
      if (!isSpace(c) && c !== COLON) key = kind = undefined;
      if (!isSpace(c) && c !== COMMA) flag = undefined;
      i++;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** The spans of a line tried as JSON, in order: an object (and what is around it), then an array. */
const SPANS = [
  ['{', '}'],
  ['[', ']'],
] as const;

/**
 * `text`, which is not one JSON document, with the JSON of its lines redacted by
 * {@link redactJson}, which decodes strings: a line of JSON lines, an SSE `data:` line, a log line
 * quoting an object (the span from its first `{` to its last `}`, else `[` to `]`). Only lines for
 * which `worth` holds are read (those with an escape that hides a secret from the text patterns),
 * each at most twice, so the cost stays linear. Other lines are kept to the character.
 */
export function redactJsonLines(text: string, redactor: JsonRedactor, worth: (line: string) => boolean): string {
  let out = '';
  let from = 0;
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf('\n', start);
    const end = newline < 0 ? text.length : newline;
    const line = text.slice(start, end);
    for (const [open, close] of worth(line) ? SPANS : []) {
      const first = line.indexOf(open);
      const last = line.lastIndexOf(close);
      if (first < 0 || last < first) continue;
      const json = line.slice(first, last + 1);
      const redacted = redactJson(json, redactor);
      if (redacted === undefined) continue;
      if (redacted !== json) {
        out += text.slice(from, start + first) + redacted;
        from = start + last + 1;
      }
      break;
    }
    start = end + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}
