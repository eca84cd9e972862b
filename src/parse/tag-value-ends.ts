import { createMarkerFinder, skipSpace, type MarkerFinder } from './marker-finder';
import { createTokenFinder } from './special-tokens';
import type { ValueEnds } from './xml-blocks';

/**
 * A dialect's tags around a value whose text may spell them (a file being written, code):
 * Qwen3-Coder's `<parameter=key>value</parameter>`, GLM's `<arg_key>key</arg_key><arg_value>value</arg_value>`.
 */
export interface QuotableValueTags {
  /** The value's closing tag: `</parameter>`, `</arg_value>`. */
  readonly close: string;
  /** The tag the next argument's header begins with: `<parameter=`, `<arg_key>`. */
  readonly headerOpen: string;
  /**
   * Whether a whole header (`<parameter=key>`; `<arg_key>key</arg_key>`, whitespace, `<arg_value>`)
   * begins at `at`, which holds `headerOpen`. Its work must be bounded (a longest key).
   */
  readonly isHeader: (text: string, at: number) => boolean;
  /** The tags that end a call after a value: `</function>` and `</tool_call>`; `</tool_call>`. */
  readonly callEnds: readonly string[];
  /** The tag a value left open ends at when no header comes first: `</function>`, `</tool_call>`. */
  readonly openValueEnd: string;
  /** The tags of another call, which a value left open never runs past: `<function=`; `<tool_call>`. */
  readonly openValueStops: readonly string[];
  /** The tags of another call, past which no later closing tag is looked for: `<function=` and `<tool_call>`; `<tool_call>`. */
  readonly callOpens: readonly string[];
}

/**
 * Where a value from a position ends, for a dialect whose values hold raw text that may spell its
 * tags. The value ends at the first closing tag that only whitespace and then the next argument's
 * header or a call's end follows (`endsValue`), so headers and closing tags quoted in it stay its
 * text. A later such closing tag is looked for only up to the next header or another call's
 * opening tag: past them the text after the first closing tag is no value's (prose, or the next
 * call), and the value ends at the first, which breaks the call. A header before any closing tag
 * shows the model left the value open (it ends there) when the first closing tag after it ends a
 * value well, or there is none; else the value quotes a whole argument (`<parameter=k>v</parameter>
 * and so on`). With neither, a value left open ends at `openValueEnd`, unless one of
 * `openValueStops` comes first (another call's: a draft cut off must not swallow the call after
 * it). -1 when no end is this call's. Each finder gets non-decreasing positions (the scan's `from`
 * does not decrease, nor the first closing tag or header after it), and a closing tag is judged
 * once per question asked of it, so each character is read a bounded number of times.
 */
export function createTagValueEnds(text: string, tags: QuotableValueTags): ValueEnds {
  const ends = (close: number): boolean => endsValue(text, close, tags);
  const closes = createMarkerFinder(text, tags.close);
  const headers = headerFinder(text, tags);
  const closesAfterHeader = createMarkerFinder(text, tags.close);
  const goodCloses = filteredFinder(createMarkerFinder(text, tags.close), ends, tags.close.length);
  const headersAfterClose = headerFinder(text, tags);
  const opensAfterClose = createTokenFinder(text, tags.callOpens);
  const openValueEnds = createMarkerFinder(text, tags.openValueEnd);
  const openValueStops = createTokenFinder(text, tags.openValueStops);
  // Several values may share their first closing tag (many headers left open before it).
  const endsAfterHeader = lastAnswer(ends);
  const endsFirst = lastAnswer(ends);
  return (from) => {
    const close = closes.next(from);
    const header = headers.next(from);
    if (header >= 0 && (close < 0 || header < close)) {
      const after = closesAfterHeader.next(header);
      if (after < 0 || endsAfterHeader(after)) return leftOpen(Math.min(header, atLeast(openValueEnds.next(from), header)), from);
    }
    if (close < 0) return leftOpen(openValueEnds.next(from), from);
    if (endsFirst(close)) return close;
    const good = goodCloses.next(close + tags.close.length);
    if (good < 0 || before(headersAfterClose.next(close), good) || before(opensAfterClose.next(close), good)) return close;
    return good;
  };

  /** The end of a value left open, `end`, unless there is none or another call's tag comes first. */
  function leftOpen(end: number, from: number): number {
    if (end < 0) return -1;
    return before(openValueStops.next(from), end) ? -1 : end;
  }
}

/** Whether the closing tag at `close` ends a value: whitespace, then a header or the end of a call. */
function endsValue(text: string, close: number, tags: QuotableValueTags): boolean {
  const next = skipSpace(text, close + tags.close.length, text.length);
  return tags.callEnds.some((tag) => text.startsWith(tag, next)) || (text.startsWith(tags.headerOpen, next) && tags.isHeader(text, next));
}

/** `at`, or `fallback` when `at` is -1. */
const atLeast = (at: number, fallback: number): number => (at < 0 ? fallback : at);

/** Whether `at` is found and before `end`. */
const before = (at: number, end: number): boolean => at >= 0 && at < end;

/** `judge`, remembering its last answer: asked again of the same position, it is not judged again. */
function lastAnswer(judge: (at: number) => boolean): (at: number) => boolean {
  let last = -1;
  let answer = false;
  return (at) => {
    if (at !== last) {
      answer = judge(at);
      last = at;
    }
    return answer;
  };
}

/** Successive headers: each `headerOpen` is checked once, `from` non-decreasing. */
function headerFinder(text: string, tags: QuotableValueTags): MarkerFinder {
  return filteredFinder(createMarkerFinder(text, tags.headerOpen), (at) => tags.isHeader(text, at), tags.headerOpen.length);
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
