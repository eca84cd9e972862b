import { skipSpace } from './marker-finder';
import { createTagValueEnds, type QuotableValueTags } from './tag-value-ends';
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

/** The tags around a value, for `createTagValueEnds`. */
const GLM_VALUE_TAGS: QuotableValueTags = {
  close: VALUE_CLOSE,
  headerOpen: KEY_OPEN,
  isHeader,
  callEnds: [CLOSE],
  openValueEnd: CLOSE,
  openValueStops: [OPEN],
  callOpens: [OPEN],
};

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
 * call's: a draft cut off must not swallow the call after it), or that `<tool_call>` opens a whole
 * call the value quotes (`quotedCallEnd`: an example call in a file being written), which stays
 * its text, the value going on after it. -1 when no end is this call's. The rule is shared with
 * Qwen3-Coder's values (see `createTagValueEnds`).
 */
export function createGlmValueEnds(text: string, quotedCallEnd?: (open: number) => number): ValueEnds {
  return createTagValueEnds(text, GLM_VALUE_TAGS, quotedCallEnd);
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
