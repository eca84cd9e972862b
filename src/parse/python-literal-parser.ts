import * as stringDecoding from './string-decoding';
import * as tolerantParser from './tolerant-parser';
import type { TolerantValue } from './json-value';

// Bound once, as in `tolerant-parser.ts`: these run once per value.
const { decodeEscapes } = stringDecoding;
const { TolerantParser, MAX_PARSE_DEPTH } = tolerantParser;
const FAIL: typeof tolerantParser.FAIL = tolerantParser.FAIL;

/**
 * The tolerant parser (see `parseTolerantValue`) reading Python literals as a model writes them in
 * a pythonic call (`run_python(code="""...""")`), as Python's own parser reads them (vLLM's and
 * SGLang's pythonic parsers run `ast.parse`): triple-quoted strings, raw strings (`r"\d+"`, the
 * backslashes kept), `u""` strings, adjacent strings joined (`"a" "b"` is `"ab"`), and tuples,
 * which are JSON arrays (`(1, 2)`; `(1,)` is `[1]`, `()` is `[]` and `(1)` is `1`, as in Python).
 * Not bytes (`b"..."`): no JSON value is one. A string or tuple the text ends inside is cut off.
 */
export class PythonLiteralParser extends TolerantParser {
  override value(depth: number): tolerantParser.Step {
    this.skipWhitespace();
    if (this.pos < this.limit && this.text.charCodeAt(this.pos) === 0x28) return this.tuple(depth + 1);
    if (stringStart(this.text, this.pos) < 0) return super.value(depth);
    let joined = '';
    for (;;) {
      const part = this.pythonString();
      if (part === FAIL) return FAIL;
      joined += part;
      const after = this.whitespaceEnd();
      if (stringStart(this.text, after) < 0 || after >= this.limit) return joined;
      this.pos = after;
    }
  }

  /** A string at `pos`, its prefix and quotes included; its text when building, else ''. */
  private pythonString(): string | typeof FAIL {
    const quoteAt = stringStart(this.text, this.pos);
    const raw = quoteAt > this.pos && (this.text.charCodeAt(this.pos) | 0x20) === 0x72;
    const quote = this.text.charCodeAt(quoteAt);
    const triple = this.text.charCodeAt(quoteAt + 1) === quote && this.text.charCodeAt(quoteAt + 2) === quote;
    const start = quoteAt + (triple ? 3 : 1);
    let escaped = false;
    let end = start;
    for (; end < this.limit; end++) {
      const c = this.text.charCodeAt(end);
      if (c === 0x5c) {
        escaped = true;
        end++;
      } else if (c === quote && (!triple || (this.text.charCodeAt(end + 1) === quote && this.text.charCodeAt(end + 2) === quote))) {
        break;
      }
    }
    if (end >= this.limit) {
      this.pos = this.limit;
      return this.fail('truncated');
    }
    this.pos = end + (triple ? 3 : 1);
    if (!this.build) return '';
    return raw || !escaped ? this.text.slice(start, end) : decodeEscapes(this.text, start, end);
  }

  /** A tuple as an array; one value in parentheses with no comma is that value. */
  private tuple(depth: number): tolerantParser.Step {
    if (depth > MAX_PARSE_DEPTH) return this.fail('depth');
    this.pos++;
    const items: TolerantValue[] = [];
    let comma = false;
    for (;;) {
      this.skipWhitespace();
      if (this.pos >= this.limit) return this.fail('truncated');
      if (this.text.charCodeAt(this.pos) === 0x29) {
        this.pos++;
        if (items.length === 1 && !comma) return items[0]!;
        return this.build ? items : null;
      }
      const item = this.value(depth);
      if (item === FAIL) return FAIL;
      items.push(item);
      this.skipWhitespace();
      const c = this.pos < this.limit ? this.text.charCodeAt(this.pos) : -1;
      if (c === 0x2c) {
        comma = true;
        this.pos++;
      } else if (c !== 0x29) {
        return this.fail(c < 0 ? 'truncated' : 'syntax');
      }
    }
  }

  /** Where the whitespace from `pos` ends, `pos` left as it is. */
  private whitespaceEnd(): number {
    const at = this.pos;
    this.skipWhitespace();
    const end = this.pos;
    this.pos = at;
    return end;
  }
}

/**
 * Where the quote of a Python string at `at` is: at `at`, or after its `r`, `u` or `R`/`U` prefix
 * (`rb`, `f` and the like are not JSON's); -1 when no string starts there.
 */
function stringStart(text: string, at: number): number {
  const c = text.charCodeAt(at);
  if (c === 0x22 || c === 0x27) return at;
  const lower = c | 0x20;
  if (lower !== 0x72 && lower !== 0x75) return -1;
  const next = text.charCodeAt(at + 1);
  return next === 0x22 || next === 0x27 ? at + 1 : -1;
}
