import { endOfName } from './detect-function-tag';
import { createTagValueEnds, type QuotableValueTags } from './tag-value-ends';
import type { ValueEnds } from './xml-blocks';

/** Qwen3-Coder's tags, and the longest name a tag may hold. */
export const QWEN_TAGS = {
  wrapOpen: '<tool_call>',
  wrapClose: '</tool_call>',
  open: '<function=',
  close: '</function>',
  paramOpen: '<parameter=',
  paramClose: '</parameter>',
  maxName: 256,
} as const;

const { wrapOpen: WRAP_OPEN, wrapClose: WRAP_CLOSE, open: OPEN, close: CLOSE, paramOpen: PARAM_OPEN, paramClose: PARAM_CLOSE, maxName: MAX_NAME } = QWEN_TAGS;

/** The tags around a value, for `createTagValueEnds`. */
const QWEN_VALUE_TAGS: QuotableValueTags = {
  close: PARAM_CLOSE,
  headerOpen: PARAM_OPEN,
  isHeader: (t, at) => nameEndAt(t, at + PARAM_OPEN.length) >= 0,
  callEnds: [CLOSE, WRAP_CLOSE],
  openValueEnd: CLOSE,
  openValueStops: [OPEN],
  callOpens: [OPEN, WRAP_OPEN],
  headerStartsLine: true,
};

/**
 * Where a Qwen3-Coder value from a position ends. A value holds raw text (an XML or HTML file
 * being written, code printing the tags), so it may spell the tags: it ends at the first
 * `</parameter>` that only whitespace and then the next header (`<parameter=key>`), `</function>`
 * or `</tool_call>` follows, so `</parameter>`, `</function>` and a `<parameter=` that is no header
 * quoted in it stay its text (vLLM's `qwen3_coder` parser ends it at such a `</parameter>` too). A
 * later such `</parameter>` is looked for only up to the next header, `<function=` or
 * `<tool_call>`: past them the text after the first is no value's (prose, or the next call), and
 * the value ends at the first, which breaks the call. Inside a value a header counts only at a
 * line's start (or the value's), as vLLM's newer `qwen3_coder` parser reads one: a value's code or
 * prose may name `<parameter=key>` mid-line. A header before any `</parameter>` shows
 * the model left the value open (it ends there, as vLLM ends it) when the first `</parameter>`
 * after it ends a value well, or there is none; else the value quotes a whole parameter
 * (`<parameter=k>v</parameter> and so on`). With neither, a value left open ends at `</function>`,
 * unless a `<function=` comes first (another call's: prose explaining the format, or a draft cut
 * off, must not swallow the call after it), or that `<function=` opens a whole call the value
 * quotes (`quotedCallEnd`: an example call in a file being written), which stays its text, the
 * value going on after it. -1 when no end is this call's. The rule is GLM's too (see
 * `createTagValueEnds`).
 */
export function createQwenValueEnds(text: string, quotedCallEnd?: (open: number) => number): ValueEnds {
  return createTagValueEnds(text, QWEN_VALUE_TAGS, quotedCallEnd);
}

/** Where a tag's name from `from` ends: its `>`, after at least one and at most `MAX_NAME` characters that are not `<` or whitespace; else -1. */
export function nameEndAt(text: string, from: number): number {
  const end = endOfName(text, from, Math.min(from + MAX_NAME, text.length));
  return end > from && text.charCodeAt(end) === 0x3e ? end : -1;
}
