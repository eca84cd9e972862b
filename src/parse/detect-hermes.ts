import { callsFromValue } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { createMarkerFinder } from './marker-finder';
import { readTaggedRegion, spanEnd } from './tagged-region';
import { parseValueSequence } from './value-sequence';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

/**
 * Hermes / Qwen calls: `<tool_call>{"name": ..., "arguments": ...}</tool_call>`, any number per
 * message, the JSON possibly inside a Markdown fence, the closing tag possibly missing.
 */
export function detectHermes(text: string): FoundCalls[] {
  const opens = createMarkerFinder(text, OPEN);
  const closes = createMarkerFinder(text, CLOSE);
  const found: FoundCalls[] = [];
  for (let open = opens.next(0); open >= 0; ) {
    const from = open + OPEN.length;
    const nextOpen = opens.next(from);
    const regionEnd = nextOpen < 0 ? text.length : nextOpen;
    const read = readTaggedRegion(from, regionEnd, closes.next(from), (start, to) => {
      const sequence = parseValueSequence(text, start, to, true);
      return { calls: sequence.items.flatMap((item) => callsFromValue(item.value, true)), end: sequence.end };
    });
    if (read !== undefined) {
      const end = spanEnd(text, read.end, regionEnd, CLOSE);
      found.push({ start: open, end, calls: read.calls, format: 'hermes' });
    }
    open = nextOpen;
  }
  return found;
}
