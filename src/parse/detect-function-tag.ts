import type { FoundCalls } from './found-calls';
import { createMarkerFinder } from './marker-finder';
import { jsonArgumentsReader, readTaggedRegion, spanEnd } from './tagged-region';
import type { WorkBudget } from './tolerant-json';

const OPEN = '<function=';
const CLOSE = '</function>';
const MAX_NAME = 256;

/** Llama 3.1 custom-tool calls: `<function=get_weather>{"city": "Paris"}</function>`. */
export function* detectFunctionTags(text: string, budget: WorkBudget): Generator<FoundCalls> {
  const opens = createMarkerFinder(text, OPEN);
  const closes = createMarkerFinder(text, CLOSE);
  for (let open = opens.next(0); open >= 0; ) {
    const nameStart = open + OPEN.length;
    const nextOpen = opens.next(nameStart);
    const regionEnd = nextOpen < 0 ? text.length : nextOpen;
    const nameEnd = endOfName(text, nameStart, nameStart + MAX_NAME < regionEnd ? nameStart + MAX_NAME : regionEnd);
    const closeAt = closes.next(nameStart);
    if (text.charCodeAt(nameEnd) !== 0x3e) {
      open = nextOpen;
      continue;
    }
    const name = text.slice(nameStart, nameEnd);
    const region = { from: nameEnd + 1, regionEnd, closeAt, mayQuoteNext: nextOpen >= 0 };
    const read = readTaggedRegion(text, region, budget, jsonArgumentsReader(text, name));
    if (read === undefined) {
      open = nextOpen;
      continue;
    }
    const end = spanEnd(text, read.end, read.end > regionEnd ? read.end : regionEnd, CLOSE);
    yield { start: open, end, calls: read.calls, format: 'llama' };
    open = opens.next(end);
  }
}

/** The end of a tag's name from `from`: the first `>`, `<` or whitespace, or `limit`. */
export function endOfName(text: string, from: number, limit: number): number {
  let pos = from;
  while (pos < limit) {
    const c = text.charCodeAt(pos);
    if (c === 0x3e || c === 0x3c || c <= 0x20) break;
    pos++;
  }
  return pos;
}
