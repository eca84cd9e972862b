import { callFromParts, type CandidateCall } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { isJsonObject } from './json-value';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { readTaggedRegion, spanEnd } from './tagged-region';
import { parseTolerantValue } from './tolerant-json';

const OPEN = '<function=';
const CLOSE = '</function>';
const MAX_NAME = 256;

/** Llama 3.1 custom-tool calls: `<function=get_weather>{"city": "Paris"}</function>`. */
export function detectFunctionTags(text: string): FoundCalls[] {
  const opens = createMarkerFinder(text, OPEN);
  const closes = createMarkerFinder(text, CLOSE);
  const found: FoundCalls[] = [];
  for (let open = opens.next(0); open >= 0; ) {
    const nameStart = open + OPEN.length;
    const nextOpen = opens.next(nameStart);
    const regionEnd = nextOpen < 0 ? text.length : nextOpen;
    const nameEnd = endOfName(text, nameStart, Math.min(regionEnd, nameStart + MAX_NAME));
    const closeAt = closes.next(nameStart);
    if (text.charCodeAt(nameEnd) === 0x3e) {
      const name = text.slice(nameStart, nameEnd);
      const read = readTaggedRegion(nameEnd + 1, regionEnd, closeAt, (from, to) => {
        const parsed = parseTolerantValue(text, skipSpace(text, from, to), to);
        const call = parsed.ok && isJsonObject(parsed.value) ? callFromParts(name, parsed.value) : undefined;
        const calls: CandidateCall[] = call === undefined ? [] : [call];
        return { calls, end: parsed.ok ? parsed.end : from };
      });
      if (read !== undefined) {
        const end = spanEnd(text, read.end, regionEnd, CLOSE);
        found.push({ start: open, end, calls: read.calls, format: 'llama' });
      }
    }
    open = nextOpen;
  }
  return found;
}

function endOfName(text: string, from: number, limit: number): number {
  let pos = from;
  while (pos < limit) {
    const c = text.charCodeAt(pos);
    if (c === 0x3e || c === 0x3c || c <= 0x20) break;
    pos++;
  }
  return pos;
}
