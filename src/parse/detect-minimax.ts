import { blankSpans, type TextSpan } from './blank-spans';
import type { FoundCalls } from './found-calls';
import { scanInvokes, type InvokeDialect } from './invoke-calls';
import { ANTHROPIC_TAGS, MINIMAX_TAGS } from './invoke-value-ends';
import type { TextParameterLookup } from './types';

const MINIMAX: InvokeDialect = { tags: MINIMAX_TAGS, format: 'minimax_xml', inBlockOnly: true };
const ANTHROPIC: InvokeDialect = { tags: ANTHROPIC_TAGS, format: 'anthropic_xml', inBlockOnly: true };

/**
 * MiniMax-M2 calls (M2.1 and M2.5 write them alike), as its chat template asks for them:
 * `<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>\n</minimax:tool_call>`,
 * several `<invoke>` in one block. A call counts only inside a `<minimax:tool_call>` block (as
 * MiniMax's and vLLM's `minimax_m2` parsers take it), whose closing tag may be cut off: a plain
 * `<invoke>` elsewhere is any XML's. A value is read as a Qwen3-Coder value is: the text less one
 * leading and one trailing line end, JSON when it is strict JSON, and text where `textParameters`
 * says its tool's schema asks for text (as MiniMax's parser keeps a string parameter); tags quoted
 * in it and a value left open end as DSML's (see `createInvokeValueEnds`).
 */
export function detectMiniMax(text: string, textParameters?: TextParameterLookup): Generator<FoundCalls> {
  return scanInvokes(text, MINIMAX, true, textParameters);
}

/**
 * Anthropic's prompt format for calls (Claude's before native tool use, which prompted models
 * copy): MiniMax's tags in a `<function_calls>` block, read as MiniMax's are. A `<function_calls>`
 * block of pythonic lines is Olmo 3's (`detectPythonic`).
 */
export function detectAnthropicXml(text: string, textParameters?: TextParameterLookup): Generator<FoundCalls> {
  return scanInvokes(text, ANTHROPIC, true, textParameters);
}

/** The text with each MiniMax call blanked out, for the same reason as `withoutQwenCalls`. */
export function withoutMiniMaxCalls(text: string): string {
  return blankSpans(text, scanInvokes(text, MINIMAX, false));
}

/** The text with each Anthropic call blanked out, for the same reason as `withoutQwenCalls`. */
export function withoutAnthropicCalls(text: string): string {
  return blankSpans(text, scanInvokes(text, ANTHROPIC, false));
}

/** The spans of the MiniMax and Anthropic calls in a text, their arguments not read. */
export function miniMaxCallSpans(text: string): Iterable<TextSpan> {
  return [...scanInvokes(text, MINIMAX, false), ...scanInvokes(text, ANTHROPIC, false)];
}
