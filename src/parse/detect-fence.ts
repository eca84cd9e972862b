import { callsFromValue } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { createMarkerFinder, skipSpace } from './marker-finder';
import type { WorkBudget } from './tolerant-json';
import { parseValueSequence } from './value-sequence';
import { isCodeFence } from './code-spans';

const FENCE = '```';
const LINE_FENCE = '\n```';

/**
 * Calls in Markdown code fences (```json ... ```), in any of the JSON shapes. A fence closes at
 * the next ``` that begins a line, so a fence quoted inside an argument string (where JSON
 * escapes the newline) does not end it; a fence never closed runs to the end of the text.
 */
export function* detectFences(text: string, budget: WorkBudget): Generator<FoundCalls> {
  const opens = createMarkerFinder(text, FENCE);
  const closes = createMarkerFinder(text, LINE_FENCE);
  for (let open = opens.next(0); open >= 0; ) {
    let from = open + FENCE.length;
    while (from < text.length && isInfoChar(text.charCodeAt(from))) from++;
    const close = closes.next(from);
    const contentEnd = close < 0 ? text.length : close + 1;
    // A fence of code (```python): JSON in it is the code's, an example (code-spans.ts).
    if (isCodeFence(text.slice(open + FENCE.length, from))) {
      open = close < 0 ? -1 : opens.next(contentEnd + FENCE.length);
      continue;
    }
    const sequence = parseValueSequence(text, from, contentEnd, false, budget);
    // No marker announced a call, so only complete call shapes count: fenced data is not a call.
    const calls = sequence.items.flatMap((item) => callsFromValue(item.value, false, item));
    if (calls.length > 0) {
      const after = skipSpace(text, sequence.end, text.length);
      const end = text.startsWith(FENCE, after) ? after + FENCE.length : sequence.end;
      yield { start: open, end, calls, format: 'markdown' };
    }
    open = close < 0 ? -1 : opens.next(contentEnd + FENCE.length);
  }
}

/** Characters of a fence's language tag: letters, digits, `_`, `+`, `-`, `.`. */
function isInfoChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) ||
    c === 0x5f || c === 0x2b || c === 0x2d || c === 0x2e
  );
}
