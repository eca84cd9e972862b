import { blankSpans, type TextSpan } from './blank-spans';
import { callFromParts } from './call-shapes';
import type { FoundCalls } from './found-calls';
import type { JsonObject } from './json-value';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { createQwenValueEnds, nameEndAt, QWEN_TAGS } from './qwen-value-ends';
import { tokenBefore } from './special-tokens';
import { quotedBlocks, scanBlocks, type Block, type ValueEnds } from './xml-blocks';
import type { TextParameterLookup } from './types';
import { readParameter } from './xml-parameter-value';

const { wrapOpen: WRAP_OPEN, wrapClose: WRAP_CLOSE, open: OPEN, close: CLOSE, paramOpen: PARAM_OPEN, paramClose: PARAM_CLOSE } = QWEN_TAGS;
const WRAP: readonly string[] = [WRAP_OPEN];

/**
 * Qwen3-Coder (and Qwen3.5) XML calls, in `<tool_call>` or bare:
 * `<tool_call><function=get_weather><parameter=city>Paris</parameter></function></tool_call>`.
 * A value runs to the first `</parameter>` that the next `<parameter=key>`, `</function>` or
 * `</tool_call>` follows, so markers quoted in it (a file's text, code, a whole call) are not
 * calls, nor its end, unless the model left it out (see `createQwenValueEnds`: it then ends at the
 * first header at a line's start or `</function>`, as vLLM's and SGLang's parsers end it, never
 * past another call's `<function=` but one it quotes whole). It is read by `readParameter` (text when `textParameters` says the named tool's
 * schema asks for text, else JSON when it is strict JSON). Only whitespace may stand between the
 * tags, and a call needs its `</function>` (or, that missing, its `</tool_call>`). A block the
 * text ends in (cut off) or broken otherwise is no call, and its text stays; the search goes on
 * where it broke, after the opening tag of a value never closed, as the other dialects let the
 * next call's marker end a call cut off inside a string. So each character is read a bounded
 * number of times. `<function=name>{json}` (Llama) is left to its own detector.
 */
export function detectQwenXml(text: string, textParameters?: TextParameterLookup): Generator<FoundCalls> {
  return scanQwenXml(text, true, textParameters);
}

/** The calls, their arguments read only when `withArguments` (else `{}`: spans alone are wanted). */
function* scanQwenXml(text: string, withArguments: boolean, textParameters?: TextParameterLookup): Generator<FoundCalls> {
  // A value quoting a whole call reads it ahead, and the scan takes that reading (see `quotedBlocks`).
  const blocks = quotedBlocks((open) => readBlock(text, open + OPEN.length, valueEnds, withArguments, textParameters));
  const valueEnds = createQwenValueEnds(text, blocks.end);
  yield* scanBlocks(
    createMarkerFinder(text, OPEN),
    blocks.read,
    (open, call, end) => ({ start: tokenBefore(text, open, 0, WRAP), end, calls: [call], format: 'qwen_xml' }),
  );
}

/** The block whose function name begins at `from`, up to and including its closing tags. */
function readBlock(text: string, from: number, valueEnds: ValueEnds, withArguments: boolean, textParameters: TextParameterLookup | undefined): Block {
  const nameEnd = nameEndAt(text, from);
  if (nameEnd < 0) return { kind: 'broken', at: from };
  const name = text.slice(from, nameEnd);
  // Key start, key end and value end of each parameter: values are read once the call is whole.
  const params: number[] = [];
  let pos = nameEnd + 1;
  for (;;) {
    pos = skipSpace(text, pos, text.length);
    if (text.startsWith(CLOSE, pos) || text.startsWith(WRAP_CLOSE, pos)) break;
    if (!text.startsWith(PARAM_OPEN, pos)) return { kind: 'broken', at: pos };
    const keyStart = pos + PARAM_OPEN.length;
    const keyEnd = nameEndAt(text, keyStart);
    if (keyEnd < 0) return { kind: 'broken', at: keyStart };
    const valueEnd = valueEnds(keyEnd + 1);
    if (valueEnd < 0) return { kind: 'broken', at: keyEnd + 1 };
    params.push(keyStart, keyEnd, valueEnd);
    pos = text.startsWith(PARAM_CLOSE, valueEnd) ? valueEnd + PARAM_CLOSE.length : valueEnd;
  }
  let end = pos;
  if (text.startsWith(CLOSE, end)) {
    end += CLOSE.length;
    const after = skipSpace(text, end, text.length);
    if (text.startsWith(WRAP_CLOSE, after)) end = after + WRAP_CLOSE.length;
  } else {
    end += WRAP_CLOSE.length;
  }
  const kinds = withArguments && params.length > 0 ? textParameters?.(name) : undefined;
  const args: JsonObject = new Map();
  for (let i = 0; withArguments && i < params.length; i += 3) {
    const keyEnd = params[i + 1] ?? 0;
    const key = text.slice(params[i], keyEnd);
    args.set(key, readParameter(text.slice(keyEnd + 1, params[i + 2]), kinds?.get(key)));
  }
  return { kind: 'call', call: callFromParts(name, args), end };
}

/**
 * The text with each Qwen XML call blanked out (same length, so offsets hold), for the fence
 * and bare JSON detectors: a value holds raw text, not a JSON string, so JSON in it (a fenced
 * example in a file being written) would otherwise read as a call of its own when the call
 * holding it names a tool not offered. The other dialects' arguments hide such JSON in strings.
 */
export function withoutQwenCalls(text: string): string {
  return blankSpans(text, qwenCallSpans(text));
}

/** The spans of the Qwen XML calls in a text, in order, their arguments not read. */
export function qwenCallSpans(text: string): Iterable<TextSpan> {
  return scanQwenXml(text, false);
}
