import { mayStartCallJson } from './call-precheck';
import { callsFromValue } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { readTaggedRegion } from './tagged-region';
import type { WorkBudget } from './tolerant-json';
import { parseValueSequence } from './value-sequence';

const TAG = '<|python_tag|>';
const END_TOKENS: readonly string[] = ['<|eom_id|>', '<|eot_id|>'];

/**
 * Llama 3.x calls after `<|python_tag|>`: one or more JSON objects (separated by `;` or new
 * lines), up to an optional `<|eom_id|>` or `<|eot_id|>`.
 */
export function* detectPythonTag(text: string, budget: WorkBudget): Generator<FoundCalls> {
  const tags = createMarkerFinder(text, TAG);
  for (let tag = tags.next(0); tag >= 0; ) {
    const from = tag + TAG.length;
    const next = tags.next(from);
    if (!mayStartCallJson(text, skipSpace(text, from, text.length), text.length)) {
      tag = next;
      continue;
    }
    const region = { from, regionEnd: next < 0 ? text.length : next, closeAt: -1, mayQuoteNext: next >= 0 };
    const read = readTaggedRegion(text, region, budget, (start, to, softLimit, readBudget) => {
      const sequence = parseValueSequence(text, start, to, false, readBudget, softLimit);
      const calls = sequence.items.flatMap((item) => callsFromValue(item.value, true, item));
      return { calls, end: sequence.end, reached: sequence.reached, cutBefore: sequence.cutBefore };
    });
    if (read === undefined) {
      tag = next;
      continue;
    }
    const after = skipSpace(text, read.end, text.length);
    const endToken = END_TOKENS.find((token) => text.startsWith(token, after));
    const end = endToken === undefined ? read.end : after + endToken.length;
    yield { start: tag, end, calls: read.calls, format: 'llama' };
    tag = tags.next(end);
  }
}
