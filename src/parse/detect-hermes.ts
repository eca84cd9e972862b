import { mayStartCallJson } from './call-precheck';
import { callsFromValue } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { createMarkerFinder } from './marker-finder';
import { readTaggedRegion, spanEnd } from './tagged-region';
import type { WorkBudget } from './tolerant-json';
import { parseValueSequence, skipFillers } from './value-sequence';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

/**
 * Hermes / Qwen calls: `<tool_call>{"name": ..., "arguments": ...}</tool_call>`, any number per
 * message, the JSON possibly inside a Markdown fence, the closing tag possibly missing.
 */
export function* detectHermes(text: string, budget: WorkBudget): Generator<FoundCalls> {
  const opens = createMarkerFinder(text, OPEN);
  const closes = createMarkerFinder(text, CLOSE);
  for (let open = opens.next(0); open >= 0; ) {
    const from = open + OPEN.length;
    const nextOpen = opens.next(from);
    const regionEnd = nextOpen < 0 ? text.length : nextOpen;
    if (!mayStartCallJson(text, skipFillers(text, from, regionEnd, true), text.length)) {
      open = nextOpen;
      continue;
    }
    const closeAt = closes.next(from);
    const region = { from, regionEnd, closeAt, mayQuoteNext: nextOpen >= 0 };
    const read = readTaggedRegion(text, region, budget, (start, to, softLimit, readBudget) => {
      const sequence = parseValueSequence(text, start, to, true, readBudget, softLimit);
      const calls = sequence.items.flatMap((item) => callsFromValue(item.value, true, item));
      return { calls, end: sequence.end, reached: sequence.reached, cutBefore: sequence.cutBefore };
    });
    if (read === undefined) {
      open = nextOpen;
      continue;
    }
    const end = spanEnd(text, read.end, read.end > regionEnd ? read.end : regionEnd, CLOSE);
    yield { start: open, end, calls: read.calls, format: 'hermes' };
    open = opens.next(end);
  }
}
