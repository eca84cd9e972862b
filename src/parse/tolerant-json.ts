import { JsonNumber, type JsonObject, type TolerantValue } from './json-value';

/**
 * Why a tolerant parse stopped: bad syntax, text ending inside a string or before a value,
 * nesting beyond the depth limit, or the caller's work budget spent.
 */
export type ParseFailureReason = 'syntax' | 'truncated' | 'depth' | 'budget';

/** A value parsed from `text[start, end)`. */
export interface ParsedValue {
  readonly ok: true;
  readonly value: TolerantValue;
  readonly start: number;
  readonly end: number;
}

/** A parse that failed at `at`, having read no further than that. */
export interface FailedValue {
  readonly ok: false;
  readonly reason: ParseFailureReason;
  readonly at: number;
}

/** Characters a caller lets the parser read across many parses; keeps repeated scans linear. */
export interface WorkBudget {
  remaining: number;
}

/**
 * Nesting deeper than this fails the parse; the service's argument limit (depth 64) is checked
 * later, with a message the model can read.
 * @default 128
 */
export const MAX_PARSE_DEPTH = 128;

const FAIL: unique symbol = Symbol('fail');
type Step = TolerantValue | typeof FAIL;
const STRICT_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/**
 * Parses one JSON value at `start`, reading no further than `limit`, in a single left-to-right
 * pass with no backtracking. Beyond JSON it accepts trailing commas, single-quoted strings,
 * unquoted keys, Python `True`/`False`/`None`, raw newlines in strings, and containers left open
 * where the text ends. Text ending inside a string, or where a value is due, is a failure: such a
 * value was cut off, and guessing its rest would invent arguments. Never throws.
 */
export function parseTolerantValue(
  text: string,
  start: number,
  limit: number,
  budget?: WorkBudget,
): ParsedValue | FailedValue {
  if (budget !== undefined && budget.remaining <= 0) return { ok: false, reason: 'budget', at: start };
  const parser = new TolerantParser(text, start, Math.min(limit, text.length));
  const value = parser.value(0);
  if (budget !== undefined) budget.remaining -= parser.pos - start + 1;
  if (value === FAIL) return { ok: false, reason: parser.failure, at: parser.pos };
  return { ok: true, value, start, end: parser.pos };
}

class TolerantParser {
  failure: ParseFailureReason = 'syntax';

  constructor(
    readonly text: string,
    public pos: number,
    readonly limit: number,
  ) {}

  value(depth: number): Step {
    this.skipWhitespace();
    if (this.pos >= this.limit) return this.fail('truncated');
    const c = this.text.charCodeAt(this.pos);
    if (c === 0x7b) return this.object(depth + 1);
    if (c === 0x5b) return this.array(depth + 1);
    if (c === 0x22 || c === 0x27) return this.string(c);
    if (c === 0x2d || c === 0x2b || c === 0x2e || isDigit(c)) return this.number();
    if (isWordChar(c)) return this.literal();
    return this.fail('syntax');
  }

  private object(depth: number): Step {
    if (depth > MAX_PARSE_DEPTH) return this.fail('depth');
    this.pos++;
    const result: JsonObject = new Map();
    for (;;) {
      this.skipWhitespace();
      if (this.pos >= this.limit) return result;
      if (this.text.charCodeAt(this.pos) === 0x7d) {
        this.pos++;
        return result;
      }
      const key = this.key();
      if (key === FAIL) return FAIL;
      this.skipWhitespace();
      if (this.pos >= this.limit) return this.fail('truncated');
      if (this.text.charCodeAt(this.pos) !== 0x3a) return this.fail('syntax');
      this.pos++;
      const item = this.value(depth);
      if (item === FAIL) return FAIL;
      result.set(key, item);
      const next = this.afterItem(0x7d);
      if (next === 'close') return result;
      if (next === 'fail') return FAIL;
    }
  }

  private array(depth: number): Step {
    if (depth > MAX_PARSE_DEPTH) return this.fail('depth');
    this.pos++;
    const result: TolerantValue[] = [];
    for (;;) {
      this.skipWhitespace();
      if (this.pos >= this.limit) return result;
      if (this.text.charCodeAt(this.pos) === 0x5d) {
        this.pos++;
        return result;
      }
      const item = this.value(depth);
      if (item === FAIL) return FAIL;
      result.push(item);
      const next = this.afterItem(0x5d);
      if (next === 'close') return result;
      if (next === 'fail') return FAIL;
    }
  }

  /** After a member: a comma continues, the closer (or the end of the text) closes. */
  private afterItem(closer: number): 'more' | 'close' | 'fail' {
    this.skipWhitespace();
    if (this.pos >= this.limit) return 'close';
    const c = this.text.charCodeAt(this.pos);
    if (c === 0x2c) {
      this.pos++;
      return 'more';
    }
    if (c === closer) {
      this.pos++;
      return 'close';
    }
    this.fail('syntax');
    return 'fail';
  }

  private key(): string | typeof FAIL {
    const c = this.text.charCodeAt(this.pos);
    if (c === 0x22 || c === 0x27) return this.string(c);
    const start = this.pos;
    while (this.pos < this.limit && isWordChar(this.text.charCodeAt(this.pos))) this.pos++;
    if (this.pos === start) return this.fail('syntax');
    return this.text.slice(start, this.pos);
  }

  private string(quote: number): string | typeof FAIL {
    const start = ++this.pos;
    let escaped = false;
    let controls = false;
    while (this.pos < this.limit) {
      const c = this.text.charCodeAt(this.pos);
      if (c === quote) break;
      if (c === 0x5c) {
        escaped = true;
        this.pos += 2;
        continue;
      }
      if (c < 0x20) controls = true;
      this.pos++;
    }
    if (this.pos >= this.limit) {
      this.pos = this.limit;
      return this.fail('truncated');
    }
    const end = this.pos++;
    if (!escaped) return this.text.slice(start, end);
    if (quote === 0x22 && !controls) {
      const decoded = decodeJsonString(this.text.slice(start - 1, end + 1));
      if (decoded !== undefined) return decoded;
    }
    return decodeEscapes(this.text, start, end);
  }

  private number(): Step {
    const start = this.pos;
    while (this.pos < this.limit && isNumberChar(this.text.charCodeAt(this.pos))) this.pos++;
    const raw = this.text.slice(start, this.pos);
    if (STRICT_NUMBER.test(raw)) return new JsonNumber(raw);
    const parsed = Number(raw);
    if (Number.isFinite(parsed)) return new JsonNumber(JSON.stringify(parsed));
    return this.fail(this.pos >= this.limit ? 'truncated' : 'syntax');
  }

  private literal(): Step {
    const start = this.pos;
    while (this.pos < this.limit && isWordChar(this.text.charCodeAt(this.pos))) this.pos++;
    switch (this.text.slice(start, this.pos)) {
      case 'true':
      case 'True':
        return true;
      case 'false':
      case 'False':
        return false;
      case 'null':
      case 'None':
        return null;
      default:
        return this.fail(this.pos >= this.limit ? 'truncated' : 'syntax');
    }
  }

  private skipWhitespace(): void {
    while (this.pos < this.limit && isWhitespace(this.text.charCodeAt(this.pos))) this.pos++;
  }

  private fail(reason: ParseFailureReason): typeof FAIL {
    this.failure = reason;
    return FAIL;
  }
}

/** JSON whitespace plus the no-break space and byte-order mark models sometimes emit. */
export function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0xa0 || c === 0xfeff;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isNumberChar(c: number): boolean {
  return isDigit(c) || c === 0x2e || c === 0x2d || c === 0x2b || c === 0x65 || c === 0x45;
}

/** Characters of unquoted keys and bare literals: ASCII letters, digits, `_`, `$`, `-`. */
function isWordChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || isDigit(c) || c === 0x5f || c === 0x24 || c === 0x2d
  );
}

function hexValue(c: number): number {
  if (isDigit(c)) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/** The native decoder, fast for strict JSON strings; undefined for anything it rejects. */
function decodeJsonString(quoted: string): string | undefined {
  try {
    const decoded: unknown = JSON.parse(quoted);
    return typeof decoded === 'string' ? decoded : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Decodes the escapes in `text[start, end)` leniently: JSON's escapes as in JSON, a malformed
 * `\u` as the letter u, and any other escaped character as itself (`\'` is `'`).
 */
function decodeEscapes(text: string, start: number, end: number): string {
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
    } else if (c === 0x75 && pos + 4 <= end && isHex4(text, pos)) {
      parts.push(String.fromCharCode(parseInt(text.slice(pos, pos + 4), 16)));
      pos += 4;
    } else {
      parts.push(String.fromCharCode(c));
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

function isHex4(text: string, from: number): boolean {
  for (let i = from; i < from + 4; i++) if (hexValue(text.charCodeAt(i)) < 0) return false;
  return true;
}
