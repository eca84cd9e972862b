import { callFromParts, type CandidateCall } from './call-shapes';
import type { JsonObject, TolerantValue } from './json-value';
import { skipSpace } from './marker-finder';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';
import type { PositionalParameterLookup } from './types';

/** A function's name (a dotted one too: `web.search`), and a keyword argument's. */
const CALL_NAME = /[A-Za-z_][\w.]{0,127}/y;
const KEYWORD = /[A-Za-z_]\w{0,127}/y;
/**
 * The module Gemini's code names the functions it was given in (`default_api.get_weather(...)`,
 * as its code-execution prompt declares them): not part of the tool's name.
 */
export const GEMINI_MODULE = 'default_api.';
/** What Gemma 3 and Gemini may wrap a call in, as in a notebook cell: `print(get_weather(city="Paris"))`. */
const PRINT = 'print(';

/**
 * Most calls one list may hold: past it the list is no call (a model writes a few; a list of
 * thousands is data, and reading it whole only to find it broken at its end would cost a
 * hostile megabyte a third of a second).
 */
const MAX_LIST_CALLS = 1024;

/** The calls read, and where the last ends. */
export interface ReadCalls {
  readonly calls: CandidateCall[];
  readonly end: number;
}

/** A call read: its name, its keyword and positional arguments, and where it ends. */
interface CallParts {
  readonly name: string;
  readonly args: JsonObject;
  readonly positional: readonly TolerantValue[];
  readonly end: number;
}

/**
 * The calls of the list whose `[` is at `at`, and where it ends; undefined when it is none. The
 * calls are built once the whole list is read: a list broken at its end builds nothing.
 */
export function readCallList(text: string, at: number, budget: WorkBudget, positional?: PositionalParameterLookup): ReadCalls | undefined {
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
  return built(parts, pos + 1, positional);
}

/**
 * The calls one after another from `at` (a line each, no list), up to `close` or the text's end,
 * and where the last ends; undefined when any is none, or there is none. With `printed`, a call
 * may stand in `print(...)`.
 */
export function readCallLines(text: string, at: number, close: string, budget: WorkBudget, positional?: PositionalParameterLookup, printed = false): ReadCalls | undefined {
  const parts: CallParts[] = [];
  let end = at;
  for (let pos = at; pos < text.length && !text.startsWith(close, pos); pos = skipSpace(text, end, text.length)) {
    const inPrint = printed && text.startsWith(PRINT, pos);
    const call = parts.length < MAX_LIST_CALLS ? readCall(text, inPrint ? skipSpace(text, pos + PRINT.length, text.length) : pos, budget) : undefined;
    if (call === undefined) return undefined;
    end = inPrint ? skipSpace(text, call.end, text.length) + 1 : call.end;
    if (inPrint && text.charCodeAt(end - 1) !== 0x29) return undefined;
    parts.push(call);
  }
  return parts.length === 0 ? undefined : built(parts, end, positional);
}

/**
 * The calls of what was read, ending at `end`; undefined when a name is none a call may have.
 * When some call's positional arguments cannot be named, the list is no call, as vLLM has it (a
 * list is one act): its calls are then only those, `unnamedArguments`, for the warning to name.
 */
function built(parts: readonly CallParts[], end: number, positional: PositionalParameterLookup | undefined): ReadCalls | undefined {
  const calls: CandidateCall[] = [];
  for (const { name, args, positional: values } of parts) {
    const call = callWithPositional(name.startsWith(GEMINI_MODULE) ? name.slice(GEMINI_MODULE.length) : name, args, values, positional);
    if (call === undefined) return undefined;
    calls.push(call);
  }
  const unnamed = calls.filter((call) => call.unnamedArguments === true);
  return { calls: unnamed.length > 0 ? unnamed : calls, end };
}

/**
 * The call of `name` with keyword arguments `args` and positional ones `values`, the latter named
 * by `positional` (the tool's parameters in order); `unnamedArguments` when they cannot all be
 * named (no answer, more values than parameters, or a keyword naming a filled one).
 */
export function callWithPositional(name: string, args: JsonObject, values: readonly TolerantValue[], positional: PositionalParameterLookup | undefined): CandidateCall | undefined {
  if (values.length === 0) return callFromParts(name, args);
  const names = positional?.(name);
  if (names === undefined || values.length > names.length || names.slice(0, values.length).some((key) => args.has(key))) {
    const call = callFromParts(name, args);
    return call === undefined ? undefined : { ...call, unnamedArguments: true };
  }
  return callFromParts(name, new Map([...values.map((value, i): [string, TolerantValue] => [names[i]!, value]), ...args]));
}

/**
 * The call whose name begins at `at` (`name(value, ..., key=value, ...)`), and where it ends:
 * positional arguments before keyword ones, as Python has them, each a literal.
 */
function readCall(text: string, at: number, budget: WorkBudget): CallParts | undefined {
  const name = match(CALL_NAME, text, at);
  if (name === undefined) return undefined;
  let pos = skipSpace(text, at + name.length, text.length);
  if (text.charCodeAt(pos) !== 0x28) return undefined;
  const args: JsonObject = new Map();
  const positional: TolerantValue[] = [];
  for (pos = skipSpace(text, pos + 1, text.length); text.charCodeAt(pos) !== 0x29; ) {
    const key = match(KEYWORD, text, pos);
    const equals = key === undefined ? -1 : skipSpace(text, pos + key.length, text.length);
    const keyword = key !== undefined && text.charCodeAt(equals) === 0x3d && text.charCodeAt(equals + 1) !== 0x3d;
    if (keyword ? args.has(key) : args.size > 0) return undefined;
    const value = parseTolerantValue(text, keyword ? skipSpace(text, equals + 1, text.length) : pos, text.length, { budget, python: true });
    if (!value.ok) return undefined;
    if (keyword) args.set(key, value.value);
    else positional.push(value.value);
    pos = skipSpace(text, value.end, text.length);
    if (text.charCodeAt(pos) === 0x2c) pos = skipSpace(text, pos + 1, text.length);
    else if (text.charCodeAt(pos) !== 0x29) return undefined;
  }
  return { name, args, positional, end: pos + 1 };
}

function match(pattern: RegExp, text: string, at: number): string | undefined {
  pattern.lastIndex = at;
  return pattern.exec(text)?.[0];
}
