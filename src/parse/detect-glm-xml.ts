import { blankSpans, type TextSpan } from './blank-spans';
import { callFromParts, type CandidateCall } from './call-shapes';
import { endOfName } from './detect-function-tag';
import type { FoundCalls } from './found-calls';
import type { JsonObject } from './json-value';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { createGlmValueEnds, GLM_TAGS, keyEndAt } from './glm-value-ends';
import { quotedBlocks, scanBlocks, type Block, type ValueEnds } from './xml-blocks';
import type { TextParameterLookup } from './types';
import { readParameter } from './xml-parameter-value';

const { open: OPEN, close: CLOSE, keyOpen: KEY_OPEN, keyClose: KEY_CLOSE, valueOpen: VALUE_OPEN, valueClose: VALUE_CLOSE, maxKey: MAX_NAME } = GLM_TAGS;
/** Bare names a chat template renders for a null (Python's `None`, JSON's `null`): no call, unless offered. */
const NULL_NAMES: ReadonlySet<string> = new Set(['None', 'null']);

/**
 * GLM-4.5 / 4.6 calls: `<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>`
 * (GLM-4.7 writes no line ends). The `<tool_call>` tag is Hermes's too: only content that starts
 * with a bare name followed by `<arg_key>` or `</tool_call>` (a call with no arguments) is GLM's,
 * so `<tool_call>{"name":...}` stays Hermes's. A key is trimmed (as vLLM's `glm4_moe` parser
 * does); a value runs to the first `</arg_value>` that the next key or `</tool_call>` follows, so
 * markers quoted in it (a file's text, code) are not calls, nor its end, unless the model left it
 * out (see `createGlmValueEnds`). It is read by `readParameter`: as text when `textParameters`
 * says the named tool's schema asks for text, else by `parameterValue` (vLLM strips all
 * whitespace around a value and falls back to Python literals; here only one line end each side
 * goes, and `None` stays text). Only whitespace may stand between the tags,
 * and a call needs its `</tool_call>`: a block cut off or broken is no call, its text stays, and
 * the search goes on where it broke, so each character is read a bounded number of times. A bare
 * `None` or `null` with no arguments (`<tool_call>None</tool_call>`: a template rendering a null)
 * is no call unless a tool of that exact name is offered (see `FoundCalls.requiresOffer`).
 */
export function detectGlmXml(text: string, textParameters?: TextParameterLookup): Generator<FoundCalls> {
  return scanGlmXml(text, true, textParameters);
}

/** The calls, their arguments read only when `withArguments` (else `{}`: spans alone are wanted). */
function* scanGlmXml(text: string, withArguments: boolean, textParameters?: TextParameterLookup): Generator<FoundCalls> {
  // A value quoting a whole call reads it ahead, and the scan takes that reading (see `quotedBlocks`).
  const blocks = quotedBlocks((open) => readBlock(text, open + OPEN.length, valueEnds, withArguments, textParameters));
  const valueEnds = createGlmValueEnds(text, blocks.end);
  yield* scanBlocks(
    createMarkerFinder(text, OPEN),
    blocks.read,
    (start, call, end) => ({ start, end, calls: [call], format: 'glm_xml', requiresOffer: isNullName(call) ? true : undefined }),
  );
}

/** Whether a call is a bare `None` or `null`, with no arguments. */
function isNullName(call: CandidateCall): boolean {
  return call.arguments === '{}' && NULL_NAMES.has(call.name);
}

/** The block whose content begins at `from`, up to and including its `</tool_call>`. */
function readBlock(text: string, from: number, valueEnds: ValueEnds, withArguments: boolean, textParameters: TextParameterLookup | undefined): Block {
  const nameStart = skipSpace(text, from, text.length);
  const nameEnd = endOfName(text, nameStart, Math.min(nameStart + MAX_NAME, text.length));
  if (nameEnd === nameStart) return { kind: 'broken', at: nameStart };
  // Key start, key end, value start and value end of each argument: values are read once the call is whole.
  const args: number[] = [];
  let pos = skipSpace(text, nameEnd, text.length);
  while (text.startsWith(KEY_OPEN, pos)) {
    const keyStart = pos + KEY_OPEN.length;
    const keyEnd = keyEndAt(text, keyStart);
    if (keyEnd < 0) return { kind: 'broken', at: keyStart };
    pos = skipSpace(text, keyEnd + KEY_CLOSE.length, text.length);
    if (!text.startsWith(VALUE_OPEN, pos)) return { kind: 'broken', at: pos };
    const valueStart = pos + VALUE_OPEN.length;
    const valueEnd = valueEnds(valueStart);
    if (valueEnd < 0) return { kind: 'broken', at: valueStart };
    args.push(keyStart, keyEnd, valueStart, valueEnd);
    pos = skipSpace(text, text.startsWith(VALUE_CLOSE, valueEnd) ? valueEnd + VALUE_CLOSE.length : valueEnd, text.length);
  }
  if (!text.startsWith(CLOSE, pos)) return { kind: 'broken', at: pos };
  const name = text.slice(nameStart, nameEnd);
  const kinds = withArguments && args.length > 0 ? textParameters?.(name) : undefined;
  const values: JsonObject = new Map();
  for (let i = 0; withArguments && i < args.length; i += 4) {
    const key = text.slice(args[i], args[i + 1]).trim();
    values.set(key, readParameter(text.slice(args[i + 2], args[i + 3]), kinds?.get(key)));
  }
  return { kind: 'call', call: callFromParts(name, values), end: pos + CLOSE.length };
}

/** The text with each GLM call blanked out, for the same reason as `withoutQwenCalls`. */
export function withoutGlmCalls(text: string): string {
  return blankSpans(text, glmCallSpans(text));
}

/** The spans of the GLM calls in a text, in order, their arguments not read. */
export function glmCallSpans(text: string): Iterable<TextSpan> {
  return scanGlmXml(text, false);
}
