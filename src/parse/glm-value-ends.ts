import { createMarkerFinder, skipSpace, type MarkerFinder } from './marker-finder';
import type { ValueEnds } from './xml-blocks';

/** GLM's tags, and the longest key a header may hold. */
export const GLM_TAGS = {
  open: '<tool_call>',
  close: '</tool_call>',
  keyOpen: '<arg_key>',
  keyClose: '</arg_key>',
  valueOpen: '<arg_value>',
  valueClose: '</arg_value>',
  maxKey: 256,
} as const;

const { open: OPEN, close: CLOSE, keyOpen: KEY_OPEN, keyClose: KEY_CLOSE, valueOpen: VALUE_OPEN, valueClose: VALUE_CLOSE, maxKey: MAX_KEY } = GLM_TAGS;

/**
 * Where a GLM value from a position ends. A value holds raw text (a file being written, code), so
 * it may spell the tags: it ends at the first `</arg_value>` that only whitespace and then the
 * next argument's header (`<arg_key>key</arg_key>`, whitespace, `<arg_value>`) or `</tool_call>`
 * follows, so `<arg_key>` and `</arg_value>` quoted in it stay its text (vLLM's and SGLang's
 * `glm4_moe` parsers end it at the first `</arg_value>`, `<arg_key>` in it kept). A later such
 * `</arg_value>` is looked for only up to the next header or `<tool_call>`: past them the text
 * after the first is no value's (prose, or the next call), and the value ends at the first, which
 * breaks the call. A header before any `</arg_value>` shows the model left the value open (it ends
 * there) when the first `</arg_value>` after it ends a value well, or there is none; else the
 * value quotes a whole pair (`<arg_key>k</arg_key><arg_value>v</arg_value> and so on`). With
 * neither, a value left open ends at `</tool_call>`, unless a `<tool_call>` comes first (another
 * call's: a draft cut off must not swallow the call after it). -1 when no end is this call's.
 * Each finder gets non-decreasing positions (the scan's `from` does not decrease, nor the first
 * `</arg_value>` or header after it), so each character is read a bounded number of times.
 */
export function createGlmValueEnds(text: string): ValueEnds {
  const finder = (tag: string): MarkerFinder => createMarkerFinder(text, tag);
  const closes = finder(VALUE_CLOSE);
  const headers = headerFinder(text);
  const closesAfterHeader = finder(VALUE_CLOSE);
  const goodCloses = goodCloseFinder(text);
  const headersAfterClose = headerFinder(text);
  const opensAfterClose = finder(OPEN);
  const callCloses = finder(CLOSE);
  const opens = finder(OPEN);
  return (from) => {
    const close = closes.next(from);
    const header = headers.next(from);
    if (header >= 0 && (close < 0 || header < close)) {
      const after = closesAfterHeader.next(header);
      if (after < 0 || endsValue(text, after)) return leftOpen(Math.min(header, atLeast(callCloses.next(from), header)), from);
    }
    if (close < 0) return leftOpen(callCloses.next(from), from);
    if (endsValue(text, close)) return close;
    const good = goodCloses.next(close + VALUE_CLOSE.length);
    if (good < 0 || before(headersAfterClose.next(close), good) || before(opensAfterClose.next(close), good)) return close;
    return good;
  };

  /** The end of a value left open, `end`, unless there is none or a `<tool_call>` comes first. */
  function leftOpen(end: number, from: number): number {
    if (end < 0) return -1;
    return before(opens.next(from), end) ? -1 : end;
  }
}

/** `at`, or `fallback` when `at` is -1. */
const atLeast = (at: number, fallback: number): number => (at < 0 ? fallback : at);

/** Whether `at` is found and before `end`. */
const before = (at: number, end: number): boolean => at >= 0 && at < end;

/** Whether the `</arg_value>` at `close` ends a value: whitespace, then a header or `</tool_call>`. */
function endsValue(text: string, close: number): boolean {
  const next = skipSpace(text, close + VALUE_CLOSE.length, text.length);
  return text.startsWith(CLOSE, next) || isHeader(text, next);
}

/** Whether an argument's header (`<arg_key>key</arg_key>`, whitespace, `<arg_value>`) begins at `at`. */
export function isHeader(text: string, at: number): boolean {
  if (!text.startsWith(KEY_OPEN, at)) return false;
  const keyEnd = keyEndAt(text, at + KEY_OPEN.length);
  return keyEnd >= 0 && text.startsWith(VALUE_OPEN, skipSpace(text, keyEnd + KEY_CLOSE.length, text.length));
}

/** Where the key from `keyStart` ends: its `</arg_key>`, at most `MAX_KEY` characters on and no `<` before; else -1. */
export function keyEndAt(text: string, keyStart: number): number {
  const limit = Math.min(keyStart + MAX_KEY + 1, text.length);
  let pos = keyStart;
  while (pos < limit && text.charCodeAt(pos) !== 0x3c) pos++;
  return pos < limit && text.startsWith(KEY_CLOSE, pos) ? pos : -1;
}

/** Successive headers: each `<arg_key>` is checked once, `from` non-decreasing. */
function headerFinder(text: string): MarkerFinder {
  return filteredFinder(createMarkerFinder(text, KEY_OPEN), (at) => isHeader(text, at), KEY_OPEN.length);
}

/** Successive `</arg_value>` tags that end a value (`endsValue`), `from` non-decreasing. */
function goodCloseFinder(text: string): MarkerFinder {
  return filteredFinder(createMarkerFinder(text, VALUE_CLOSE), (at) => endsValue(text, at), VALUE_CLOSE.length);
}

/**
 * The occurrences `markers` finds that `keep` keeps, remembering its last answer as
 * `createMarkerFinder` does, so each occurrence is checked once for non-decreasing `from`.
 */
function filteredFinder(markers: MarkerFinder, keep: (at: number) => boolean, step: number): MarkerFinder {
  let found = -1;
  let searchedFrom = -1;
  let exhausted = false;
  return {
    next(from: number): number {
      if (exhausted) return -1;
      if (searchedFrom >= 0 && searchedFrom <= from && found >= from) return found;
      searchedFrom = from;
      for (let at = markers.next(from); at >= 0; at = markers.next(at + step)) {
        if (keep(at)) return (found = at);
      }
      exhausted = true;
      return (found = -1);
    },
  };
}
