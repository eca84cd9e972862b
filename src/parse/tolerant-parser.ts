import * as callPrecheck from './call-precheck';
import * as charClasses from './char-classes';
import * as jsonValue from './json-value';
import type { JsonObject, TolerantValue } from './json-value';
import * as numberText from './number-text';
import type { ClosedContainer, ParseFailureReason, ScalarAtTextEnd } from './parse-outcome';
import * as stringDecoding from './string-decoding';

// Bound once: under some CommonJS transforms (the test runner's) every call through an import
// binding goes through a getter, and these run once per character or candidate.
const { isCallKey } = callPrecheck;
const { isDigit, isNumberChar, isWhitespace, isWordChar } = charClasses;
const { JsonNumber } = jsonValue;
const { lenientNumberAsJson } = numberText;
const { decodeEscapes, decodeJsonString } = stringDecoding;
// Builtins bound once: in a sandbox such as the test runner's, each global lookup costs more
// than the work around it, and these run once per token.
const ObjectMap = Map;

/**
 * Nesting deeper than this fails the parse; the service's argument limit (depth 64) is checked
 * later, with a message the model can read.
 * @default 128
 */
export const MAX_PARSE_DEPTH = 128;

/** What a step of the parser returns: a value, or that it failed (see `TolerantParser.failure`). */
export const FAIL: unique symbol = Symbol('fail');
export type Step = TolerantValue | typeof FAIL;
const STRICT_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** A literal or number: a value with no closing mark of its own, unlike strings and containers. */
export function isBareScalar(value: TolerantValue): boolean {
  return value === null || typeof value === 'boolean' || value instanceof JsonNumber;
}

/** The parser behind `parseTolerantValue`, reading from `pos` to `limit`; see there for what it accepts. */
export class TolerantParser {
  failure: ParseFailureReason = 'syntax';
  stringAcrossSoftLimit = false;
  /** Just after the last complete element of the outermost value, when it is an array. */
  elementsEnd = -1;
  /** Whether the outermost value is an object with a call's key (see `isCallKey`). */
  callKeys = false;
  /** See `ParsedValue.containersClosedAtLimit`; recorded only when building. */
  containersClosedAtLimit: ClosedContainer[] | undefined;
  /** See `FailedValue.unclosed`; innermost first, as the failure unwinds. */
  unclosed: number[] | undefined;
  /** See `ParsedValue.scalarAtTextEnd`; recorded here for object members, only when building. */
  scalarAtTextEnd: ScalarAtTextEnd | undefined;

  /** @param build whether to build the value, or only to recognise it (the value is then null) */
  constructor(
    readonly text: string,
    public pos: number,
    readonly limit: number,
    readonly softLimit: number,
    readonly build: boolean,
  ) {}

  value(depth: number): Step {
    this.skipWhitespace();
    if (this.pos >= this.limit) return this.fail('truncated');
    const c = this.text.charCodeAt(this.pos);
    if (c === 0x7b) return this.object(depth + 1);
    if (c === 0x5b) return this.array(depth + 1);
    if (c === 0x22 || c === 0x27) return this.string(c);
    if (c === 0x2d || c === 0x2b || c === 0x2e || isDigit(c)) return this.number(depth);
    if (isWordChar(c)) return this.literal();
    return this.fail('syntax');
  }

  private object(depth: number): Step {
    if (depth > MAX_PARSE_DEPTH) return this.fail('depth');
    const open = this.pos++;
    // Created at the first member: most objects tried in prose fail before it.
    let result: JsonObject | undefined;
    let callKeys = false;
    let members = 0;
    for (;;) {
      this.skipWhitespace();
      if (this.pos >= this.limit) {
        if (members > 0 && this.strayCommaAtLimit()) return this.finishObject(result, true);
        this.fail('truncated');
        break;
      }
      if (this.text.charCodeAt(this.pos) === 0x7d) {
        this.pos++;
        return this.finishObject(result);
      }
      const keyStart = this.pos;
      const key = this.key();
      if (key === FAIL) break;
      if (!callKeys) callKeys = isCallKey(this.text, keyStart, this.pos);
      this.skipWhitespace();
      if (this.pos >= this.limit || this.text.charCodeAt(this.pos) !== 0x3a) {
        this.fail(this.pos >= this.limit ? 'truncated' : 'syntax');
        break;
      }
      this.pos++;
      const item = this.value(depth);
      if (item === FAIL) break;
      members++;
      if (this.build) {
        result ??= new ObjectMap<string, TolerantValue>();
        result.set(key, item);
        if (this.pos >= this.text.length && isBareScalar(item)) this.scalarAtTextEnd = { holder: result, key };
      }
      const next = this.afterItem(0x7d);
      if (next === 'close' || next === 'limit') return this.finishObject(result, next === 'limit');
      if (next === 'fail') break;
    }
    return this.failedIn(open, depth, callKeys);
  }

  /**
   * Notes a container, opened at `open`, that failed: the outermost says whether it had a call's
   * key; an inner one is `unclosed`, unless it is an object with a call's key (a broken call, which
   * its caller skips whole) or the failure is the depth limit (its caller skips the nesting).
   */
  private failedIn(open: number, depth: number, callKeys: boolean): typeof FAIL {
    if (depth === 1) this.callKeys = callKeys;
    else if (!callKeys && this.failure !== 'depth') (this.unclosed ??= []).push(open);
    return FAIL;
  }

  /** The object built (noted when the limit closed it), or null when only recognising. */
  private finishObject(result: JsonObject | undefined, atLimit = false): JsonObject | null {
    if (!this.build) return null;
    const object = result ?? new ObjectMap<string, TolerantValue>();
    if (atLimit) (this.containersClosedAtLimit ??= []).push(object);
    return object;
  }

  /** An array the limit closed, noted as such when building. */
  private finishArray(result: TolerantValue[] | null): TolerantValue[] | null {
    if (result !== null) (this.containersClosedAtLimit ??= []).push(result);
    return result;
  }

  private array(depth: number): Step {
    if (depth > MAX_PARSE_DEPTH) return this.fail('depth');
    const open = this.pos++;
    const result: TolerantValue[] | null = this.build ? [] : null;
    for (;;) {
      this.skipWhitespace();
      if (this.pos >= this.limit) {
        // After a comma in a list a value was due, even before a closing tag (`["a@x.com",`).
        this.fail('truncated');
        return this.failedIn(open, depth, false);
      }
      if (this.text.charCodeAt(this.pos) === 0x5d) {
        this.pos++;
        return result;
      }
      const item = this.value(depth);
      if (item === FAIL) return this.failedIn(open, depth, false);
      if (depth === 1) this.elementsEnd = this.pos;
      result?.push(item);
      const next = this.afterItem(0x5d);
      if (next === 'close') return result;
      if (next === 'limit') return this.finishArray(result);
      if (next === 'fail') return this.failedIn(open, depth, false);
    }
  }

  /**
   * Whether an object whose last member is followed by `,` ends at the limit. Where the text
   * ends, the comma says more was due and the object was cut off (`{"city":"Paris",`); an earlier
   * limit is a closing tag or the next call's marker, written after the comma, so the model ended
   * the object there and the comma was a stray one (`{"city":"Paris",</tool_call>`). Not in a
   * list: there the comma after an element is where a value was due (`["a@x.com",</tool_call>`
   * may have been meant for more recipients).
   */
  private strayCommaAtLimit(): boolean {
    return this.limit < this.text.length;
  }

  /** After a member: a comma continues, the closer closes, and so does the limit. */
  private afterItem(closer: number): 'more' | 'close' | 'limit' | 'fail' {
    this.skipWhitespace();
    if (this.pos >= this.limit) return 'limit';
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
    return this.build ? this.text.slice(start, this.pos) : '';
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
    if (start <= this.softLimit && this.pos >= this.softLimit) this.stringAcrossSoftLimit = true;
    if (this.pos >= this.limit) {
      this.pos = this.limit;
      return this.fail('truncated');
    }
    const end = this.pos++;
    if (!this.build) return '';
    if (!escaped) return this.text.slice(start, end);
    if (quote === 0x22 && !controls) {
      const decoded = decodeJsonString(this.text.slice(start - 1, end + 1));
      if (decoded !== undefined) return decoded;
    }
    return decodeEscapes(this.text, start, end);
  }

  /**
   * A number in a container that runs to the end of the whole text was cut off (`10` may have
   * been `10000`); one that runs to an earlier limit (a closing tag, the next marker) ended there,
   * and so does a number that is the whole value. A lenient number is rewritten as JSON from its
   * own digits, never through a double, so `+9007199254740993` keeps its last digit.
   */
  private number(depth: number): Step {
    const start = this.pos;
    while (this.pos < this.limit && isNumberChar(this.text.charCodeAt(this.pos))) this.pos++;
    if (depth > 0 && this.pos >= this.text.length) return this.fail('truncated');
    const raw = this.text.slice(start, this.pos);
    if (STRICT_NUMBER.test(raw)) return this.build ? new JsonNumber(raw) : null;
    const json = lenientNumberAsJson(raw);
    if (json !== undefined) return this.build ? new JsonNumber(json) : null;
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

  protected skipWhitespace(): void {
    while (this.pos < this.limit && isWhitespace(this.text.charCodeAt(this.pos))) this.pos++;
  }

  protected fail(reason: ParseFailureReason): typeof FAIL {
    this.failure = reason;
    return FAIL;
  }
}
