import type { ClosedContainer, FailedValue, ParsedValue, ScalarAtTextEnd, TolerantParseOptions } from './parse-outcome';
import * as pythonLiteralParser from './python-literal-parser';
import * as tolerantParser from './tolerant-parser';

// Bound once: under some CommonJS transforms (the test runner's) every use of an import binding
// goes through a getter, and this runs once per candidate.
const { TolerantParser, isBareScalar } = tolerantParser;
const FAIL: typeof tolerantParser.FAIL = tolerantParser.FAIL;
const { PythonLiteralParser } = pythonLiteralParser;

export type { FailedValue, ParseFailureReason, ParsedValue, TolerantParseOptions, WorkBudget } from './parse-outcome';
export { MAX_PARSE_DEPTH } from './tolerant-parser';

/**
 * A failed parse is charged twice for up to this many characters, once for the rest: hostile
 * input is made of many short failures, while one long honest failure (a cut-off string, a
 * sample ending in "...") must leave the budget for the valid calls after it. A failure at the
 * depth limit is charged once: callers that try again go on past the nesting it read.
 */
const FAILURE_SURCHARGE = 4096;
const NONE_UNCLOSED: readonly number[] = [];
const NONE_CLOSED: readonly ClosedContainer[] = [];
const TOP_LEVEL_SCALAR: ScalarAtTextEnd = {};

/**
 * Parses one JSON value at `start`, reading no further than `limit`, left to right with no
 * backtracking. Beyond JSON it accepts trailing commas, single-quoted strings, unquoted keys,
 * Python `True`/`False`/`None`, raw newlines in strings, numbers such as `+1`, `007` and `.5`
 * (rewritten as JSON with their digits as written), and containers left open where the text ends
 * just after a complete value (a missing closing brace; see `ParsedValue.limitEndsText`). Text
 * ending inside a string or a number, where a value or key is due (after `{`, `[`, `,` or `:`),
 * or inside a key, is a failure: such a value was cut off, and guessing its rest would invent
 * arguments. With `python`, Python's literals too (see `PythonLiteralParser`). A limit before the
 * end of the text (a closing tag) ends a number, and after a trailing `,` ends its container: the
 * model wrote what came next. Never throws.
 *
 * The value is read twice: first only to recognise it, building nothing, then, if it is one, to
 * build it. Most values tried in prose or hostile input fail, and then cost next to no garbage.
 */
export function parseTolerantValue(
  text: string,
  start: number,
  limit: number,
  options: TolerantParseOptions = {},
): ParsedValue | FailedValue {
  const { budget, softLimit = -1, python = false } = options;
  if (budget !== undefined && budget.remaining <= 0) {
    const none = { stringAcrossSoftLimit: false, elementsEnd: -1, callKeys: false, unclosed: NONE_UNCLOSED };
    return { ok: false, reason: 'budget', at: start, ...none };
  }
  const end = limit < text.length ? limit : text.length;
  const Parser = python ? PythonLiteralParser : TolerantParser;
  const recogniser = new Parser(text, start, end, softLimit, false);
  const recognised = recogniser.value(0);
  if (budget !== undefined) {
    const read = recogniser.pos - start + 1;
    const once = recognised !== FAIL || recogniser.failure === 'depth';
    budget.remaining -= once ? read : read + (read < FAILURE_SURCHARGE ? read : FAILURE_SURCHARGE);
  }
  const parser = recognised === FAIL ? recogniser : new Parser(text, start, end, softLimit, true);
  const value = recognised === FAIL ? FAIL : parser.value(0);
  if (value === FAIL) {
    const { failure, pos, stringAcrossSoftLimit, elementsEnd, callKeys, unclosed = NONE_UNCLOSED } = parser;
    return { ok: false, reason: failure, at: pos, stringAcrossSoftLimit, elementsEnd, callKeys, unclosed };
  }
  const { containersClosedAtLimit = NONE_CLOSED } = parser;
  const parsed = { ok: true, value, start, end: parser.pos, containersClosedAtLimit, limitEndsText: end === text.length } as const;
  // The value itself is the literal or number the text ends in, or one of its members is.
  const scalarAtTextEnd = parser.pos >= text.length && isBareScalar(value) ? TOP_LEVEL_SCALAR : parser.scalarAtTextEnd;
  return scalarAtTextEnd === undefined ? parsed : { ...parsed, scalarAtTextEnd };
}

