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
 * Decodes the escapes in `text[start, end)` leniently: JSON's escapes as in JSON, a malformed
 * `\u` as the letter u, and any other escaped character as itself (`\'` is `'`).
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
    } else if (c === 0x75 && pos + 4 <= end && hex4(text, pos) >= 0) {
      parts.push(fromCharCode(hex4(text, pos)));
      pos += 4;
    } else {
      parts.push(fromCharCode(c));
    }
    chunk = pos;
  }
  parts.push(text.slice(chunk, end));
  return parts.join('');
}

const SIMPLE_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x6e, '\n'],
  [0x74, '\t'],
  [0x72, '\r'],
  [0x62, '\b'],
  [0x66, '\f'],
]);

/** The value of the four hex digits at `from`, or -1. */
function hex4(text: string, from: number): number {
  let value = 0;
  for (let i = from; i < from + 4; i++) {
    const digit = hexValue(text.charCodeAt(i));
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

function hexValue(c: number): number {
  if (isDigit(c)) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}
