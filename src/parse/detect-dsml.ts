import { blankSpans, type TextSpan } from './blank-spans';
import type { FoundCalls } from './found-calls';
import { scanInvokes, type InvokeDialect } from './invoke-calls';
import { DSML_TAGS } from './invoke-value-ends';

const DSML: InvokeDialect = { tags: DSML_TAGS, format: 'deepseek_dsml', inBlockOnly: false };

/**
 * DeepSeek V3.2 DSML calls, as its encoding (`encoding_dsv32.py`) writes them:
 * `<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>`.
 * A `string="true"` value is text, kept exactly as written (as vLLM's `deepseek_v32` parser
 * keeps it); any other is read by `parameterValue`: JSON when it is strict JSON (`3`, `[1]`),
 * else the text, as SGLang falls back to it. The tags are also read with ASCII bars
 * (`<|DSML|invoke`), and V4's `tool_calls` block as V3.2's. Unlike vLLM, a call needs no block
 * around it, and a call with its `</｜DSML｜invoke>` before a block cut off is a call. A value
 * runs to the first `</｜DSML｜parameter>` that the next parameter, `</｜DSML｜invoke>` or
 * `</｜DSML｜function_calls>` follows, so tags quoted in it (a file's text, code) are not calls,
 * nor its end, and ends as a GLM or Qwen3-Coder value left open ends when the model left that out
 * (see `createInvokeValueEnds`).
 * Only whitespace may stand between the tags, and a call needs its `</｜DSML｜invoke>` (see
 * `scanInvokes`).
 */
export function detectDsml(text: string): Generator<FoundCalls> {
  return scanInvokes(text, DSML, true);
}

/** The text with each DSML call blanked out, for the same reason as `withoutQwenCalls`. */
export function withoutDsmlCalls(text: string): string {
  return blankSpans(text, dsmlCallSpans(text));
}

/** The spans of the DSML calls in a text, in order, their arguments not read. */
export function dsmlCallSpans(text: string): Iterable<TextSpan> {
  return scanInvokes(text, DSML, false);
}
