import { skipSpace, type MarkerFinder } from './marker-finder';
import { createTokenFinder, tokenAt, type Spellings } from './special-tokens';
import type { ValueEnds } from './xml-blocks';

/**
 * A dialect's tags around a value whose text may spell them (a file being written, code):
 * Qwen3-Coder's `<parameter=key>value</parameter>`, GLM's `<arg_key>key</arg_key><arg_value>value</arg_value>`,
 * DeepSeek's DSML `<｜DSML｜parameter name="key" string="true">value</｜DSML｜parameter>`. A tag is
 * one spelling or several of one length (DSML's with fullwidth or ASCII bars).
 */
export interface QuotableValueTags {
  /** The value's closing tag: `</parameter>`, `</arg_value>`, `</｜DSML｜parameter>`. */
  readonly close: string | Spellings;
  /** The tag the next argument's header begins with: `<parameter=`, `<arg_key>`, `<｜DSML｜parameter`. */
  readonly headerOpen: string | Spellings;
  /**
   * Whether a whole header (`<parameter=key>`; `<arg_key>key</arg_key>`, whitespace, `<arg_value>`;
   * `<｜DSML｜parameter name="key">`) begins at `at`, which holds `headerOpen`. Its work must be
   * bounded (a longest key, DSML's 1 KiB of attributes).
   */
  readonly isHeader: (text: string, at: number) => boolean;
  /** The tags that end a call after a value: `</function>` and `</tool_call>`; `</tool_call>`; `</｜DSML｜invoke>` and `</｜DSML｜function_calls>`. */
  readonly callEnds: Spellings;
  /** The tag a value left open ends at when no header comes first: `</function>`, `</tool_call>`, `</｜DSML｜invoke>`. */
  readonly openValueEnd: string | Spellings;
  /** The tags of another call, which a value left open never runs past: `<function=`; `<tool_call>`; `<｜DSML｜invoke`. */
  readonly openValueStops: Spellings;
  /** The tags of another call, past which no later closing tag is looked for: `<function=` and `<tool_call>`; `<tool_call>`; `<｜DSML｜invoke` and `<｜DSML｜function_calls>`. */
  readonly callOpens: Spellings;
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
  const close = spellings(tags.close);
  const closeLength = close[0]?.length ?? 0;
  const headerOpen = spellings(tags.headerOpen);
  const ends = (at: number): boolean => endsValue(text, at + closeLength, headerOpen, tags);
  const closes = createTokenFinder(text, close);
  const headers = headerFinder(text, headerOpen, tags);
  const closesAfterHeader = createTokenFinder(text, close);
  const goodCloses = filteredFinder(createTokenFinder(text, close), ends, closeLength);
  const headersAfterClose = headerFinder(text, headerOpen, tags);
  const opensAfterClose = createTokenFinder(text, tags.callOpens);
  const openValueEnds = createTokenFinder(text, spellings(tags.openValueEnd));
  const openValueStops = createTokenFinder(text, tags.openValueStops);
  // Several values may share their first closing tag (many headers left open before it).
  const endsAfterHeader = lastAnswer(ends);
  const endsFirst = lastAnswer(ends);
  return (from) => {
    const first = closes.next(from);
    const header = headers.next(from);
    if (header >= 0 && (first < 0 || header < first)) {
      const after = closesAfterHeader.next(header);
      if (after < 0 || endsAfterHeader(after)) return leftOpen(Math.min(header, atLeast(openValueEnds.next(from), header)), from);
    }
    if (first < 0) return leftOpen(openValueEnds.next(from), from);
    if (endsFirst(first)) return first;
    const good = goodCloses.next(first + closeLength);
    if (good < 0 || before(headersAfterClose.next(first), good) || before(opensAfterClose.next(first), good)) return first;
    return good;
  };

  /** The end of a value left open, `end`, unless there is none or another call's tag comes first. */
  function leftOpen(end: number, from: number): number {
    if (end < 0) return -1;
    return before(openValueStops.next(from), end) ? -1 : end;
  }
}

/** Whether the closing tag that ends just before `after` ends a value: whitespace, then a header or the end of a call. */
function endsValue(text: string, after: number, headerOpen: Spellings, tags: QuotableValueTags): boolean {
  const next = skipSpace(text, after, text.length);
  return tokenAt(text, next, tags.callEnds) || (tokenAt(text, next, headerOpen) && tags.isHeader(text, next));
}

/** A tag's spellings: itself alone, or those given. */
const spellings = (tag: string | Spellings): Spellings => (typeof tag === 'string' ? [tag] : tag);

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
function headerFinder(text: string, headerOpen: Spellings, tags: QuotableValueTags): MarkerFinder {
  return filteredFinder(createTokenFinder(text, headerOpen), (at) => tags.isHeader(text, at), headerOpen[0]?.length ?? 0);
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
