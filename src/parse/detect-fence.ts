import { callsFromValue } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { parseValueSequence } from './value-sequence';

const FENCE = '```';
const LINE_FENCE = '\n```';

/**
 * Calls in Markdown code fences (```json ... ```), in any of the JSON shapes. A fence closes at
 * the next ``` that begins a line, so a fence quoted inside an argument string (where JSON
 * escapes the newline) does not end it; a fence never closed runs to the end of the text.
 */
export function detectFences(text: string): FoundCalls[] {
  const opens = createMarkerFinder(text, FENCE);
  const closes = createMarkerFinder(text, LINE_FENCE);
  const found: FoundCalls[] = [];
  for (let open = opens.next(0); open >= 0; ) {
    let from = open + FENCE.length;
    while (from < text.length && isInfoChar(text.charCodeAt(from))) from++;
    const close = closes.next(from);
    const contentEnd = close < 0 ? text.length : close + 1;
    const sequence = parseValueSequence(text, from, contentEnd, false);
    // No marker announced a call, so only complete call shapes count: fenced data is not a call.
    const calls = sequence.items.flatMap((item) => callsFromValue(item.value, false));
    let resume = contentEnd + FENCE.length;
    if (calls.length > 0) {
      const after = skipSpace(text, sequence.end, text.length);
      resume = text.startsWith(FENCE, after) ? after + FENCE.length : sequence.end;
      found.push({ start: open, end: resume, calls, format: 'markdown' });
    }
    open = resume >= text.length ? -1 : opens.next(resume);
  }
  return found;
}

/** Characters of a fence's language tag: letters, digits, `_`, `+`, `-`, `.`. */
function isInfoChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) ||
    c === 0x5f || c === 0x2b || c === 0x2d || c === 0x2e
  );
}
