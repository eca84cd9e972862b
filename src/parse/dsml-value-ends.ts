import type { Spellings } from './special-tokens';
import { readTagAttributes } from './tag-attributes';
import { createTagValueEnds } from './tag-value-ends';
import type { ValueEnds } from './xml-blocks';

/** A DSML tag with DeepSeek's fullwidth bars (`<｜DSML｜invoke`, U+FF5C), and with ASCII bars: of one length. */
const dsml = (opening: '<' | '</', name: string): Spellings => [`${opening}\uff5cDSML\uff5c${name}`, `${opening}|DSML|${name}`];

/** DeepSeek's DSML tags, each in both spellings; the block around the calls is V3.2's `function_calls` or V4's `tool_calls`. */
export const DSML_TAGS = {
  invokeOpen: dsml('<', 'invoke'),
  invokeClose: dsml('</', 'invoke>'),
  parameterOpen: dsml('<', 'parameter'),
  parameterClose: dsml('</', 'parameter>'),
  blockOpen: [...dsml('<', 'function_calls>'), ...dsml('<', 'tool_calls>')],
  blockClose: [...dsml('</', 'function_calls>'), ...dsml('</', 'tool_calls>')],
} as const;

const { invokeOpen: INVOKE_OPEN, invokeClose: INVOKE_CLOSE, parameterOpen: PARAMETER_OPEN, parameterClose: PARAMETER_CLOSE, blockOpen: BLOCK_OPEN, blockClose: BLOCK_CLOSE } = DSML_TAGS;

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
 * Qwen3-Coder's too (see `createTagValueEnds`).
 */
export function createDsmlValueEnds(text: string): ValueEnds {
  return createTagValueEnds(text, {
    close: PARAMETER_CLOSE,
    headerOpen: PARAMETER_OPEN,
    isHeader,
    callEnds: [...INVOKE_CLOSE, ...BLOCK_CLOSE],
    openValueEnd: INVOKE_CLOSE,
    openValueStops: INVOKE_OPEN,
    callOpens: [...INVOKE_OPEN, ...BLOCK_OPEN],
  });
}

/** Whether a whole parameter header (`<｜DSML｜parameter` then ` name="key"`, any other attributes, `>`) begins at `at`: at most 1 KiB read, stopping at any `<`. */
function isHeader(text: string, at: number): boolean {
  const tag = readTagAttributes(text, at + lengthOf(PARAMETER_OPEN));
  return tag.kind === 'tag' && tag.attributes.has('name');
}
