import type { Spellings } from './special-tokens';
import { tagHasAttribute } from './tag-attributes';
import { createTagValueEnds } from './tag-value-ends';
import type { ValueEnds } from './xml-blocks';

/**
 * The tags of a dialect of `<invoke name="NAME"><parameter name="key">value</parameter></invoke>`
 * calls inside a block: DeepSeek's DSML and MiniMax's. The tags that a call is read by
 * (`invokeOpen`, `parameterOpen`, their closings) have spellings of one length each; the block's
 * may differ.
 */
export interface InvokeTags {
  readonly invokeOpen: Spellings;
  readonly invokeClose: Spellings;
  readonly parameterOpen: Spellings;
  readonly parameterClose: Spellings;
  readonly blockOpen: Spellings;
  readonly blockClose: Spellings;
}

/** A DSML tag with DeepSeek's fullwidth bars (`<｜DSML｜invoke`, U+FF5C), and with ASCII bars: of one length. */
const dsml = (opening: '<' | '</', name: string): Spellings => [`${opening}\uff5cDSML\uff5c${name}`, `${opening}|DSML|${name}`];

/** DeepSeek's DSML tags, each in both spellings; the block around the calls is V3.2's `function_calls` or V4's `tool_calls`. */
export const DSML_TAGS: InvokeTags = {
  invokeOpen: dsml('<', 'invoke'),
  invokeClose: dsml('</', 'invoke>'),
  parameterOpen: dsml('<', 'parameter'),
  parameterClose: dsml('</', 'parameter>'),
  blockOpen: [...dsml('<', 'function_calls>'), ...dsml('<', 'tool_calls>')],
  blockClose: [...dsml('</', 'function_calls>'), ...dsml('</', 'tool_calls>')],
};

/** MiniMax-M2's tags: plain `<invoke name="NAME">` and `<parameter name="key">` in a `<minimax:tool_call>` block. */
export const MINIMAX_TAGS: InvokeTags = {
  invokeOpen: ['<invoke'],
  invokeClose: ['</invoke>'],
  parameterOpen: ['<parameter'],
  parameterClose: ['</parameter>'],
  blockOpen: ['<minimax:tool_call>'],
  blockClose: ['</minimax:tool_call>'],
};

/** Anthropic's prompt format for calls: the same plain tags in a `<function_calls>` block. */
export const ANTHROPIC_TAGS: InvokeTags = { ...MINIMAX_TAGS, blockOpen: ['<function_calls>'], blockClose: ['</function_calls>'] };

/** The length of a tag, whose spellings are all of one length. */
export const lengthOf = (tag: Spellings): number => tag[0]?.length ?? 0;

/**
 * Where a DSML value from a position ends. A `string="true"` value is raw text, written unescaped
 * by DeepSeek's encoding (an XML or HTML file being written, code printing the tags), so it may
 * spell the tags: it ends at the first `</｜DSML｜parameter>` that only whitespace and then the
 * next header (`<｜DSML｜parameter name="key"...>`, whole), `</｜DSML｜invoke>` or the block's
 * `</｜DSML｜function_calls>` follows, so closing tags quoted in it stay its text (vLLM's and
 * SGLang's `deepseek_v32` parsers cut it at the first `</｜DSML｜parameter>`). A later such tag is
 * looked for only up to the next header, `<｜DSML｜invoke` or block: past them the text after the
 * first is no value's (prose, or the next call), and the value ends at the first, which breaks
 * the call. A header before any `</｜DSML｜parameter>` shows the model left the value open (it
 * ends there) when the first `</｜DSML｜parameter>` after it ends a value well, or there is none;
 * else the value quotes a whole parameter. With neither, a value left open ends at
 * `</｜DSML｜invoke>`, unless an `<｜DSML｜invoke` comes first (another call's: a draft cut off
 * must not swallow the call after it). -1 when no end is this call's. The rule is GLM's and
 * Qwen3-Coder's too (see `createTagValueEnds`). MiniMax's values, with its tags, end alike.
 */
export function createInvokeValueEnds(text: string, tags: InvokeTags): ValueEnds {
  const headerNameLength = lengthOf(tags.parameterOpen);
  return createTagValueEnds(text, {
    close: tags.parameterClose,
    headerOpen: tags.parameterOpen,
    // A whole parameter header (`<｜DSML｜parameter` then ` name="key"`, any other attributes, `>`): at most 1 KiB read, stopping at any `<`.
    isHeader: (source, at) => tagHasAttribute(source, at + headerNameLength, 'name'),
    callEnds: [...tags.invokeClose, ...tags.blockClose],
    openValueEnd: tags.invokeClose,
    openValueStops: tags.invokeOpen,
    callOpens: [...tags.invokeOpen, ...tags.blockOpen],
  });
}
