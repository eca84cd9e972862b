import { isDigit } from './char-classes';

// Builtins bound once: in a sandbox such as the test runner's, each global lookup costs more
// than the work around it, and these run once per escaped string.
const { parse } = JSON;
const { fromCharCode } = String;

/** Decodes a quoted strict-JSON string natively (fast); undefined for anything JSON rejects. */
export function decodeJsonString(quoted: string): string | undefined {
  try {
    const decoded: unknown = parse(quoted);
    return typeof decoded === 'string' ? decoded : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Decodes the escapes in `text[start, end)` leniently: JSON's escapes as in JSON; those
 * JavaScript and Python share as there (`\x41` is `A`, `\101` too, `\0` is NUL, `\v` a vertical
 * tab); `\'` as `'` and an escaped line break as the break. Any other escape, a malformed `\u` or
 * `\x` among them, keeps its backslash, as Python keeps it: what a model writes so is a regex
 * (`"\d+\.\d+"`) or a Windows path (`"C:\Users\xavier"`), which came out as `d+.d+` and
 * `C:Usersxavier` when the backslash was dropped (as JavaScript drops it).
 */
export function decodeEscapes(text: string, start: number, end: number): string {
  const parts: string[] = [];
  let chunk = start;
  let pos = start;
  while (pos < end) {
    if (text.charCodeAt(pos) !== 0x5c) {
      pos++;
      continue;
    }
    parts.push(text.slice(chunk, pos));
    const c = text.charCodeAt(pos + 1);
    pos += 2;
    const simple = SIMPLE_ESCAPES.get(c);
    if (simple !== undefined) {
      parts.push(simple);
    } else if (c === 0x75 && pos + 4 <= end && hexValueOf(text, pos, 4) >= 0) {
      parts.push(fromCharCode(hexValueOf(text, pos, 4)));
      pos += 4;
    } else if (c === 0x78 && pos + 2 <= end && hexValueOf(text, pos, 2) >= 0) {
      parts.push(fromCharCode(hexValueOf(text, pos, 2)));
      pos += 2;
    } else if (isOctal(c)) {
      // Up to three octal digits, at most 0o377, as in JavaScript and (but for 0o400 up) Python.
      let code = c - 0x30;
      for (let digits = 1; digits < 3 && pos < end && isOctal(text.charCodeAt(pos)); digits++) {
        const next = code * 8 + text.charCodeAt(pos) - 0x30;
        if (next > 0o377) break;
        code = next;
        pos++;
      }
      parts.push(fromCharCode(code));
    } else {
      parts.push(KEPT_AS_ITSELF.has(c) ? fromCharCode(c) : `\\${fromCharCode(c)}`);
    }
    chunk = pos;
  }
  parts.push(text.slice(chunk, end));
  return parts.join('');
}

/** Escaped characters that stand for themselves: `"`, `\\` and `/` (JSON), `'`, and a line break. */
const KEPT_AS_ITSELF: ReadonlySet<number> = new Set([0x22, 0x5c, 0x2f, 0x27, 0x0a, 0x0d]);

const SIMPLE_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x6e, '\n'],
  [0x74, '\t'],
  [0x72, '\r'],
  [0x62, '\b'],
  [0x66, '\f'],
  [0x76, '\v'],
]);

/** The value of the `count` hex digits at `from`, or -1. */
function hexValueOf(text: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const digit = hexValue(text.charCodeAt(i));
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

function isOctal(c: number): boolean {
  return c >= 0x30 && c <= 0x37;
}

function hexValue(c: number): number {
  if (isDigit(c)) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}
