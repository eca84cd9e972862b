import { blankSpans, type TextSpan } from './blank-spans';
import { callFromParts } from './call-shapes';
import type { FoundCalls } from './found-calls';
import type { JsonObject } from './json-value';
import { createDsmlValueEnds, DSML_TAGS, lengthOf } from './dsml-value-ends';
import { createTokenFinder, tokenAt, tokenBefore } from './special-tokens';
import { skipSpace } from './marker-finder';
import { readTagAttributes } from './tag-attributes';
import { scanBlocks, type Block, type ValueEnds } from './xml-blocks';
import { parameterValue } from './xml-parameter-value';

const { invokeOpen: INVOKE_OPEN, invokeClose: INVOKE_CLOSE, parameterOpen: PARAMETER_OPEN, parameterClose: PARAMETER_CLOSE, blockOpen: BLOCK_OPEN, blockClose: BLOCK_CLOSE } = DSML_TAGS;

/** One parameter of a call: its key, whether its value is text as written, and where the value lies. */
interface Parameter {
  readonly key: string;
  readonly text: boolean;
  readonly from: number;
  readonly to: number;
}

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
 * (see `createDsmlValueEnds`).
 * Only whitespace may stand between the tags, and a call needs its `</｜DSML｜invoke>`: one cut
 * off or broken is no call and its text stays; the search goes on where it broke, so each
 * character is read a bounded number of times.
 */
export function detectDsml(text: string): Generator<FoundCalls> {
  return scanDsml(text, true);
}

/** The calls, their arguments read only when `withArguments` (else `{}`: spans alone are wanted). */
function scanDsml(text: string, withArguments: boolean): Generator<FoundCalls> {
  const valueEnds = createDsmlValueEnds(text);
  let previousEnd = 0;
  return scanBlocks(
    createTokenFinder(text, INVOKE_OPEN),
    (open) => readCall(text, open + lengthOf(INVOKE_OPEN), valueEnds, withArguments),
    (open, call, callEnd) => {
      const start = tokenBefore(text, open, previousEnd, BLOCK_OPEN);
      const after = skipSpace(text, callEnd, text.length);
      const close = BLOCK_CLOSE.find((spelling) => text.startsWith(spelling, after));
      previousEnd = close === undefined ? callEnd : after + close.length;
      return { start, end: previousEnd, calls: [call], format: 'deepseek_dsml' };
    },
  );
}

/** The call whose `invoke` tag name ends at `from`, up to and including its `</｜DSML｜invoke>`. */
function readCall(text: string, from: number, valueEnds: ValueEnds, withArguments: boolean): Block {
  const invoke = readTagAttributes(text, from);
  if (invoke.kind === 'broken') return invoke;
  const name = invoke.attributes.get('name');
  if (name === undefined) return { kind: 'broken', at: invoke.end };
  // Values are read once the call is whole.
  const parameters: Parameter[] = [];
  let pos = skipSpace(text, invoke.end, text.length);
  while (tokenAt(text, pos, PARAMETER_OPEN)) {
    const tag = readTagAttributes(text, pos + lengthOf(PARAMETER_OPEN));
    if (tag.kind === 'broken') return tag;
    const key = tag.attributes.get('name');
    const valueEnd = key === undefined ? -1 : valueEnds(tag.end);
    if (key === undefined || valueEnd < 0) return { kind: 'broken', at: tag.end };
    parameters.push({ key, text: tag.attributes.get('string') === 'true', from: tag.end, to: valueEnd });
    pos = skipSpace(text, tokenAt(text, valueEnd, PARAMETER_CLOSE) ? valueEnd + lengthOf(PARAMETER_CLOSE) : valueEnd, text.length);
  }
  if (!tokenAt(text, pos, INVOKE_CLOSE)) return { kind: 'broken', at: pos };
  const values: JsonObject = new Map();
  for (const parameter of withArguments ? parameters : []) {
    const raw = text.slice(parameter.from, parameter.to);
    values.set(parameter.key, parameter.text ? raw : parameterValue(raw));
  }
  return { kind: 'call', call: callFromParts(name, values), end: pos + lengthOf(INVOKE_CLOSE) };
}

/** The text with each DSML call blanked out, for the same reason as `withoutQwenCalls`. */
export function withoutDsmlCalls(text: string): string {
  return blankSpans(text, dsmlCallSpans(text));
}

/** The spans of the DSML calls in a text, in order, their arguments not read. */
export function dsmlCallSpans(text: string): Iterable<TextSpan> {
  return scanDsml(text, false);
}
