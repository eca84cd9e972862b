import { skipSpace } from './marker-finder';

const REASONING_TAGS: readonly (readonly [string, string])[] = [
  ['<think>', '</think>'],
  ['<thinking>', '</thinking>'],
];
/** Call markers that show a closing reasoning tag belongs to a call's arguments instead. */
const CALL_MARKERS: readonly string[] = ['<tool_call>', '[TOOL_CALLS]', '<|python_tag|>', '<function='];

/**
 * The text with its leading reasoning block (`<think>...</think>` or `<thinking>...</thinking>`)
 * blanked out with spaces of the same length, so calls drafted while thinking are not taken as
 * calls and offsets still point into the original. Reasoning comes first in an output: an
 * opening tag anywhere else is text (an argument may quote it). A closing tag with no opening
 * tag before it ends a block that began with the text, as when the chat template put the
 * opening tag in the prompt, unless a call marker comes before it. An opening tag never closed
 * runs to the end.
 */
export function maskReasoning(text: string): string {
  const start = skipSpace(text, 0, text.length);
  for (const [open, close] of REASONING_TAGS) {
    const closeAt = text.indexOf(close);
    if (text.startsWith(open, start)) return blank(text, closeAt < 0 ? text.length : closeAt + close.length);
    if (closeAt >= 0 && text.lastIndexOf(open, closeAt) < 0 && !hasCallMarkerBefore(text, closeAt)) {
      return blank(text, closeAt + close.length);
    }
  }
  return text;
}

function hasCallMarkerBefore(text: string, end: number): boolean {
  return CALL_MARKERS.some((marker) => {
    const at = text.indexOf(marker);
    return at >= 0 && at < end;
  });
}

function blank(text: string, end: number): string {
  return ' '.repeat(end) + text.slice(end);
}
