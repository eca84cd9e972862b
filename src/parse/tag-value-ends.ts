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
  /**
   * Whether a header inside a value counts only at a line's start (or the value's): Qwen3-Coder's,
   * as vLLM's newer `qwen3_coder` parser reads them, so a value mentioning `<parameter=key>` in a
   * line of code or prose keeps it. One that only whitespace parts from a closing tag before it
   * ends that value wherever it stands (`</parameter><parameter=k>`, a call on one line).
   */
  readonly headerStartsLine?: boolean;
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
 *
 * A value that no end is this call's, and that holds one of `openValueStops`, may quote a whole
 * call (an example call in a file being written): `quotedCallEnd` reads the call that tag opens
 * (once: the scan takes that reading when it comes to the call, the value turning out none) and,
 * the call being whole, the value goes on after it, the call its text; past it, a closing tag that
 * ends no value makes the value none (a draft cut off, then the real call, then prose). Asked only
 * where the value would break, it changes no value read otherwise, and the positions it reads at
 * only grow (a call quoted reads its values after the value's start, before where it goes on).
 */
export function createTagValueEnds(text: string, tags: QuotableValueTags, quotedCallEnd?: (open: number) => number): ValueEnds {
  const close = spellings(tags.close);
  const closeLength = close[0]?.length ?? 0;
  const headerOpen = spellings(tags.headerOpen);
  const inValue = tags.headerStartsLine === true ? (at: number) => text.charCodeAt(at - 1) === 0x0a && tags.isHeader(text, at) : (at: number) => tags.isHeader(text, at);
  const ends = (at: number): boolean => endsValue(text, at + closeLength, headerOpen, tags);
  const closes = createTokenFinder(text, close);
  const headers = headerFinder(text, headerOpen, inValue);
  const closesAfterHeader = createTokenFinder(text, close);
  const goodCloses = filteredFinder(createTokenFinder(text, close), ends, closeLength);
  const headersAfterClose = headerFinder(text, headerOpen, inValue);
  const opensAfterClose = createTokenFinder(text, tags.callOpens);
  const openValueEnds = createTokenFinder(text, spellings(tags.openValueEnd));
  const openValueStops = createTokenFinder(text, tags.openValueStops);
  // Several values may share their first closing tag (many headers left open before it).
  const endsAfterHeader = lastAnswer(ends);
  const endsFirst = lastAnswer(ends);
  return (from) => {
    for (let at = from; ; ) {
      const end = valueEnd(at, at === from);
      // Past a call quoted, a closing tag the call cannot go on from makes the value none, and that call one.
      if (at > from && end >= 0 && end === closes.next(at) && !endsFirst(end)) return -1;
      const open = end < 0 && quotedCallEnd !== undefined ? openValueStops.next(at) : -1;
      const after = open < 0 ? -1 : quotedCallEnd?.(open) ?? -1;
      if (after < 0) return end;
      at = after;
    }
  };

  /** Where the value from `from` ends (from the value's start, `atStart`), no call quoted in it read. */
  function valueEnd(from: number, atStart: boolean): number {
    const first = closes.next(from);
    const header = atStart && tokenAt(text, from, headerOpen) && tags.isHeader(text, from) ? from : headers.next(from);
    if (header >= 0 && (first < 0 || header < first)) {
      const after = closesAfterHeader.next(header);
      if (after < 0 || endsAfterHeader(after)) return leftOpen(Math.min(header, atLeast(openValueEnds.next(from), header)), from);
    }
    if (first < 0) return leftOpen(openValueEnds.next(from), from);
    if (endsFirst(first)) return first;
    const good = goodCloses.next(first + closeLength);
    if (good < 0 || before(headersAfterClose.next(first), good) || before(opensAfterClose.next(first), good)) return first;
    return good;
  }

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

/** Successive headers that `isHeader` takes: each `headerOpen` is checked once, `from` non-decreasing. */
function headerFinder(text: string, headerOpen: Spellings, isHeader: (at: number) => boolean): MarkerFinder {
  return filteredFinder(createTokenFinder(text, headerOpen), isHeader, headerOpen[0]?.length ?? 0);
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
