import { callsFromValue } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { parseValueSequence } from './value-sequence';

const TAG = '<|python_tag|>';
const END_TOKENS: readonly string[] = ['<|eom_id|>', '<|eot_id|>'];

/**
 * Llama 3.x calls after `<|python_tag|>`: one or more JSON objects (separated by `;` or new
 * lines), up to an optional `<|eom_id|>` or `<|eot_id|>`.
 */
export function detectPythonTag(text: string): FoundCalls[] {
  const tags = createMarkerFinder(text, TAG);
  const found: FoundCalls[] = [];
  for (let tag = tags.next(0); tag >= 0; ) {
    const from = tag + TAG.length;
    const next = tags.next(from);
    const limit = next < 0 ? text.length : next;
    const sequence = parseValueSequence(text, from, limit, false);
    const calls = sequence.items.flatMap((item) => callsFromValue(item.value, true));
    if (calls.length > 0) {
      const after = skipSpace(text, sequence.end, limit);
      const endToken = END_TOKENS.find((token) => text.startsWith(token, after));
      const end = endToken === undefined ? sequence.end : after + endToken.length;
      found.push({ start: tag, end, calls, format: 'llama' });
    }
    tag = next;
  }
  return found;
}
