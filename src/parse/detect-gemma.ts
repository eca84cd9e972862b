import { callFromParts } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { JsonNumber, type JsonObject, type TolerantValue } from './json-value';
import { skipSpace } from './marker-finder';
import { createTokenFinder } from './special-tokens';
import type { WorkBudget } from './tolerant-json';
import { MAX_PARSE_DEPTH } from './tolerant-json';

/** A Gemma dialect: the tokens around a call, and the one around each string. */
interface GemmaDialect {
  readonly open: string;
  readonly close: string;
  readonly quote: string;
}

/** Gemma 4's tokens, and FunctionGemma's (Gemma 3 270M). */
const DIALECTS: readonly GemmaDialect[] = [
  { open: '<|tool_call>', close: '<tool_call|>', quote: '<|"|>' },
  { open: '<start_function_call>', close: '<end_function_call>', quote: '<escape>' },
];

const CALL_PREFIX = 'call:';
const NAME = /[\w.-]{1,128}/y;
/** A number as JSON writes it, kept as its text. */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** Longest unquoted key: past it, what precedes a `:` is no key. */
const MAX_KEY_CHARS = 256;
const FAIL = Symbol('fail');

/**
 * Gemma 4's calls (`<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>`) and
 * FunctionGemma's (`<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>`),
 * one call after each opening token, as vLLM's `gemma4` and `functiongemma` parsers read them:
 * keys bare (or quoted), a string between two quote tokens taken exactly as written (it may hold
 * `}`, `,` or quotes), nested `{...}` and `[...]`, and bare values: `true`, `false`, `null`
 * (`none`, `nil`), a number kept digit for digit, else the text. The closing token may be
 * missing. A call cut off (a string, object or list left open) or malformed is no call, and its
 * text stays. Work is charged to `budget`: past it, nothing more is read.
 */
export function* detectGemma(text: string, budget: WorkBudget): Generator<FoundCalls> {
  if (!text.includes(CALL_PREFIX)) return;
  const opens = createTokenFinder(text, DIALECTS.map((dialect) => dialect.open));
  for (let from = 0; budget.remaining > 0; ) {
    const at = opens.next(from);
    const dialect = at < 0 ? undefined : DIALECTS.find((d) => text.startsWith(d.open, at));
    if (dialect === undefined) return;
    const reader = new GemmaReader(text, dialect.quote);
    const callAt = skipSpace(text, at + dialect.open.length, text.length);
    const read = reader.call(callAt);
    budget.remaining -= reader.reached - callAt + 1;
    if (read === undefined) {
      from = at + dialect.open.length;
      continue;
    }
    const after = skipSpace(text, read.end, text.length);
    const end = text.startsWith(dialect.close, after) ? after + dialect.close.length : read.end;
    if (read.call !== undefined) yield { start: at, end, calls: [read.call], format: 'gemma' };
    from = end;
  }
}

/** Reads one call's text; `reached` is how far it read, to charge the work. */
class GemmaReader {
  reached = 0;

  constructor(
    private readonly text: string,
    private readonly quote: string,
  ) {}

  /** The call at `at` (`call:name{...}`) and where it ends, or undefined when there is none. */
  call(at: number): { call: ReturnType<typeof callFromParts>; end: number } | undefined {
    const { text } = this;
    this.reached = at;
    if (!text.startsWith(CALL_PREFIX, at)) return undefined;
    NAME.lastIndex = at + CALL_PREFIX.length;
    const name = NAME.exec(text)?.[0];
    const open = at + CALL_PREFIX.length + (name?.length ?? 0);
    if (name === undefined || text.charCodeAt(open) !== 0x7b) return undefined;
    const args = this.members(open + 1, 0);
    if (args === FAIL) return undefined;
    return { call: callFromParts(name, args.value), end: args.end };
  }

  /** The members of an object from `from` up to and past its `}`. */
  private members(from: number, depth: number): { value: JsonObject; end: number } | typeof FAIL {
    const { text } = this;
    if (depth >= MAX_PARSE_DEPTH) return FAIL;
    const members: JsonObject = new Map();
    for (let pos = from; ; ) {
      pos = this.skipSeparators(pos);
      if (pos >= text.length) return this.failAt(pos);
      if (text.charCodeAt(pos) === 0x7d) return { value: members, end: pos + 1 };
      const key = this.key(pos);
      if (key === FAIL) return FAIL;
      const value = this.value(skipSpace(text, key.end, text.length), depth + 1);
      if (value === FAIL) return FAIL;
      members.set(key.value, value.value);
      pos = skipSpace(text, value.end, text.length);
      const c = text.charCodeAt(pos);
      if (c !== 0x2c && c !== 0x7d) return this.failAt(pos);
    }
  }

  /** The items of a list from `from` up to and past its `]`. */
  private items(from: number, depth: number): { value: TolerantValue[]; end: number } | typeof FAIL {
    const { text } = this;
    if (depth >= MAX_PARSE_DEPTH) return FAIL;
    const items: TolerantValue[] = [];
    for (let pos = from; ; ) {
      pos = this.skipSeparators(pos);
      if (pos >= text.length) return this.failAt(pos);
      if (text.charCodeAt(pos) === 0x5d) return { value: items, end: pos + 1 };
      const value = this.value(pos, depth + 1);
      if (value === FAIL) return FAIL;
      items.push(value.value);
      pos = skipSpace(text, value.end, text.length);
      const c = text.charCodeAt(pos);
      if (c !== 0x2c && c !== 0x5d) return this.failAt(pos);
    }
  }

  /** A key and the position after its `:`: bare (no separator or bracket in it), or quoted. */
  private key(at: number): { value: string; end: number } | typeof FAIL {
    const { text } = this;
    if (text.startsWith(this.quote, at)) {
      const string = this.string(at);
      if (string === FAIL) return FAIL;
      const colon = skipSpace(text, string.end, text.length);
      return text.charCodeAt(colon) === 0x3a ? { value: string.value, end: colon + 1 } : this.failAt(colon);
    }
    let end = at;
    while (end < text.length && end - at <= MAX_KEY_CHARS && !isKeyStop(text.charCodeAt(end))) end++;
    const key = text.slice(at, end).trim();
    return text.charCodeAt(end) === 0x3a && key.length > 0 ? { value: key, end: end + 1 } : this.failAt(end);
  }

  private value(at: number, depth: number): { value: TolerantValue; end: number } | typeof FAIL {
    const { text } = this;
    if (text.startsWith(this.quote, at)) return this.string(at);
    const c = text.charCodeAt(at);
    if (c === 0x7b) return this.members(at + 1, depth);
    if (c === 0x5b) return this.items(at + 1, depth);
    let end = at;
    while (end < text.length && !isBareStop(text.charCodeAt(end))) end++;
    const raw = text.slice(at, end).trim();
    if (raw.length === 0 || end >= text.length) return this.failAt(end);
    return { value: bareValue(raw), end };
  }

  /** A string from its opening quote token to past its closing one, its text as written. */
  private string(at: number): { value: string; end: number } | typeof FAIL {
    const from = at + this.quote.length;
    const close = this.text.indexOf(this.quote, from);
    if (close < 0) return this.failAt(this.text.length);
    this.reached = Math.max(this.reached, close);
    return { value: this.text.slice(from, close), end: close + this.quote.length };
  }

  private skipSeparators(from: number): number {
    let pos = from;
    for (let c = this.text.charCodeAt(pos); c === 0x2c || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = this.text.charCodeAt(pos)) pos++;
    this.reached = Math.max(this.reached, pos);
    return pos;
  }

  private failAt(at: number): typeof FAIL {
    this.reached = Math.max(this.reached, at);
    return FAIL;
  }
}

/** `true`, `false`, `null` (`none`, `nil` in any case), a JSON number as written, else the text. */
function bareValue(raw: string): TolerantValue {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  const lower = raw.toLowerCase();
  if (lower === 'null' || lower === 'none' || lower === 'nil') return null;
  return NUMBER.test(raw) ? new JsonNumber(raw) : raw;
}

/** What ends a bare key: its `:`, a separator, a bracket, a tag, a line end. */
function isKeyStop(c: number): boolean {
  return c === 0x3a || c === 0x2c || c === 0x7b || c === 0x7d || c === 0x5b || c === 0x5d || c === 0x3c || c === 0x0a;
}

/** What ends a bare value: a separator, a closing bracket, a tag (the closing token of a call cut short). */
function isBareStop(c: number): boolean {
  return c === 0x2c || c === 0x7d || c === 0x5d || c === 0x3c;
}
