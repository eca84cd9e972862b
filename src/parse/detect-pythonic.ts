import { blankSpans } from './blank-spans';
import { callFromParts, type CandidateCall } from './call-shapes';
import type { FoundCalls } from './found-calls';
import type { JsonObject } from './json-value';
import { skipSpace } from './marker-finder';
import { createTokenFinder } from './special-tokens';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';

/**
 * The tokens around a list of calls: Llama 4's, and Liquid LFM2's; and Olmo 3's tags, around calls
 * one a line with no list (`<function_calls>\nget_weather(city="Paris")\nget_time()\n</function_calls>`).
 */
const MARKERS: readonly Marker[] = [
  { open: '<|python_start|>', close: '<|python_end|>', lines: false },
  { open: '<|tool_call_start|>', close: '<|tool_call_end|>', lines: false },
  { open: '<function_calls>', close: '</function_calls>', lines: true },
];

/** A marker's tokens, and whether the calls after it may stand one a line rather than in a list. */
interface Marker {
  readonly open: string;
  readonly close: string;
  readonly lines: boolean;
}

/** A function's name (a dotted one too: `web.search`), and a keyword argument's. */
const CALL_NAME = /[A-Za-z_][\w.]{0,127}/y;
const KEYWORD = /[A-Za-z_]\w{0,127}/y;

/**
 * Calls written as a Python list of calls with keyword arguments (`[get_weather(city="Paris",
 * days=3), get_time()]`), as Llama 3.2 and 4 write them under a pythonic template (vLLM's and
 * SGLang's `pythonic` parsers) and Liquid LFM2 writes them: the whole text, reasoning aside, being
 * the list (as vLLM takes it: a list in prose is an example, or code), or the list after
 * Llama 4's `<|python_start|>` or LFM2's `<|tool_call_start|>` anywhere, up to its optional closing
 * token; or, after Olmo 3's `<function_calls>`, calls one after another (a line each) up to
 * `</function_calls>` or the text's end. Values are Python literals, read tolerantly (`True`,
 * `None`, single quotes, triple-quoted and raw strings, lists, tuples, dicts; see `PythonLiteralParser`). A positional argument, a keyword given twice, an expression, or a list cut off makes the whole
 * list no call, as in vLLM, and its text stays; so does a list of more than 1,024 calls.
 */
export function* detectPythonic(text: string, budget: WorkBudget): Generator<FoundCalls> {
  // The list's `[` found natively first: text whose reasoning was blanked out may be megabytes of spaces.
  const first = text.indexOf('[');
  if (first >= 0 && skipSpace(text, 0, first) === first) {
    const list = readCallList(text, first, budget);
    const end = list === undefined ? -1 : endOfTurn(text, skipSpace(text, list.end, text.length));
    if (list !== undefined && end === text.length) {
      yield { start: first, end, calls: list.calls, format: 'pythonic' };
      return;
    }
  }
  const opens = createTokenFinder(text, MARKERS.map((marker) => marker.open));
  for (let from = 0; ; ) {
    const at = opens.next(from);
    const marker = at < 0 ? undefined : MARKERS.find((m) => text.startsWith(m.open, at));
    if (marker === undefined) return;
    const listAt = skipSpace(text, at + marker.open.length, text.length);
    const list = text.charCodeAt(listAt) === 0x5b ? readCallList(text, listAt, budget) : marker.lines ? readCallLines(text, listAt, marker.close, budget) : undefined;
    if (list === undefined) {
      from = at + marker.open.length;
      continue;
    }
    const after = skipSpace(text, list.end, text.length);
    const end = text.startsWith(marker.close, after) ? after + marker.close.length : list.end;
    yield { start: at, end, calls: list.calls, format: 'pythonic' };
    from = end;
  }
}

/**
 * End-of-turn tokens a server may leave in the text after a whole-text list (it kept special
 * tokens): Llama 3's `<|eot_id|>` and `<|eom_id|>`, Llama 4's `<|eot|>`, and the usual others.
 * Before, `[get_weather(city="Paris")]<|eot_id|>` was no call, and nothing said so.
 */
const END_TOKENS = ['<|eot_id|>', '<|eom_id|>', '<|eot|>', '<|eom|>', '<|end_of_text|>', '<|endoftext|>', '<|im_end|>', '<end_of_turn>', '</s>'];

/** Past the end-of-turn tokens (and spaces) from `pos`: the text's end when only they are left. */
function endOfTurn(text: string, pos: number): number {
  for (let at = pos; ; ) {
    if (at >= text.length) return at;
    const token = END_TOKENS.find((t) => text.startsWith(t, at));
    if (token === undefined) return pos;
    at = skipSpace(text, at + token.length, text.length);
  }
}

/**
 * The text with each pythonic call list blanked out, for the same reason as `withoutQwenCalls`: a
 * dict argument (`spec={'name': 'rm', 'arguments': {}}`) is no call of its own.
 */
export function withoutPythonicCalls(text: string, budget: WorkBudget): string {
  return blankSpans(text, detectPythonic(text, budget));
}

/**
 * Most calls one list may hold: past it the list is no call (a model writes a few; a list of
 * thousands is data, and reading it whole only to find it broken at its end would cost a
 * hostile megabyte a third of a second).
 */
const MAX_LIST_CALLS = 1024;

/**
 * The calls of the list whose `[` is at `at`, and where it ends; undefined when it is none. The
 * calls are built once the whole list is read: a list broken at its end builds nothing.
 */
function readCallList(text: string, at: number, budget: WorkBudget): { calls: CandidateCall[]; end: number } | undefined {
  const parts: CallParts[] = [];
  let pos = skipSpace(text, at + 1, text.length);
  for (;;) {
    const call = parts.length < MAX_LIST_CALLS ? readCall(text, pos, budget) : undefined;
    if (call === undefined) return undefined;
    parts.push(call);
    pos = skipSpace(text, call.end, text.length);
    if (text.charCodeAt(pos) === 0x2c) pos = skipSpace(text, pos + 1, text.length);
    else if (text.charCodeAt(pos) !== 0x5d) return undefined;
    if (text.charCodeAt(pos) === 0x5d) break;
  }
  return built(parts, pos + 1);
}

/**
 * The calls one after another from `at` (Olmo 3's, a line each, no list), up to `close` or the
 * text's end, and where the last ends; undefined when any is none, or there is none.
 */
function readCallLines(text: string, at: number, close: string, budget: WorkBudget): { calls: CandidateCall[]; end: number } | undefined {
  const parts: CallParts[] = [];
  let end = at;
  for (let pos = at; pos < text.length && !text.startsWith(close, pos); pos = skipSpace(text, end, text.length)) {
    const call = parts.length < MAX_LIST_CALLS ? readCall(text, pos, budget) : undefined;
    if (call === undefined) return undefined;
    parts.push(call);
    end = call.end;
  }
  return parts.length === 0 ? undefined : built(parts, end);
}

/** The calls of what was read, ending at `end`; undefined when a name is none a call may have. */
function built(parts: readonly CallParts[], end: number): { calls: CandidateCall[]; end: number } | undefined {
  const calls: CandidateCall[] = [];
  for (const { name, args } of parts) {
    const call = callFromParts(name, args);
    if (call === undefined) return undefined;
    calls.push(call);
  }
  return { calls, end };
}

/** A call read: its name, its arguments, and where it ends. */
interface CallParts {
  readonly name: string;
  readonly args: JsonObject;
  readonly end: number;
}

/** The call whose name begins at `at` (`name(key=value, ...)`), and where it ends. */
function readCall(text: string, at: number, budget: WorkBudget): CallParts | undefined {
  const name = match(CALL_NAME, text, at);
  if (name === undefined) return undefined;
  let pos = skipSpace(text, at + name.length, text.length);
  if (text.charCodeAt(pos) !== 0x28) return undefined;
  const args: JsonObject = new Map();
  for (pos = skipSpace(text, pos + 1, text.length); text.charCodeAt(pos) !== 0x29; ) {
    const key = match(KEYWORD, text, pos);
    if (key === undefined || args.has(key)) return undefined;
    pos = skipSpace(text, pos + key.length, text.length);
    if (text.charCodeAt(pos) !== 0x3d || text.charCodeAt(pos + 1) === 0x3d) return undefined;
    const value = parseTolerantValue(text, skipSpace(text, pos + 1, text.length), text.length, { budget, python: true });
    if (!value.ok) return undefined;
    args.set(key, value.value);
    pos = skipSpace(text, value.end, text.length);
    if (text.charCodeAt(pos) === 0x2c) pos = skipSpace(text, pos + 1, text.length);
    else if (text.charCodeAt(pos) !== 0x29) return undefined;
  }
  return { name, args, end: pos + 1 };
}

function match(pattern: RegExp, text: string, at: number): string | undefined {
  pattern.lastIndex = at;
  return pattern.exec(text)?.[0];
}
