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
    this.pos++;
    let out = '';
    let chunk = this.pos;
    while (this.pos < this.limit) {
      const c = this.text.charCodeAt(this.pos);
      if (c === quote) {
        out += this.text.slice(chunk, this.pos);
        this.pos++;
        return out;
      }
      if (c !== 0x5c) {
        this.pos++;
        continue;
      }
      out += this.text.slice(chunk, this.pos);
      const escaped = this.escape();
      if (escaped === FAIL) return FAIL;
      out += escaped;
      chunk = this.pos;
    }
    return this.fail('truncated');
  }

  private escape(): string | typeof FAIL {
    if (this.pos + 1 >= this.limit) return this.fail('truncated');
    const c = this.text.charCodeAt(this.pos + 1);
    this.pos += 2;
    switch (c) {
      case 0x6e: return '\n';
      case 0x74: return '\t';
      case 0x72: return '\r';
      case 0x62: return '\b';
      case 0x66: return '\f';
      case 0x75: {
        if (this.pos + 4 > this.limit) return this.fail('truncated');
        let code = 0;
        for (let i = 0; i < 4; i++) {
          const digit = hexValue(this.text.charCodeAt(this.pos + i));
          if (digit < 0) return this.fail('syntax');
          code = code * 16 + digit;
        }
        this.pos += 4;
        return String.fromCharCode(code);
      }
      default:
        // `\"`, `\\`, `\/` as in JSON; any other escaped character stands for itself.
        return this.text.charAt(this.pos - 1);
    }
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
