import { mayStartCallJson } from './call-precheck';
import { skipSpace } from './marker-finder';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';

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
 * opening tag in the prompt, unless a call marker comes before it or it lies inside JSON that
 * may be a call (bare, OpenAI or fenced): then it is quoted in an argument, and blanking up to it
 * would drop that call or expose one quoted after it. Such JSON is looked for with `budget`; when
 * that is spent nothing is blanked. An opening tag never closed runs to the end.
 */
export function maskReasoning(text: string, budget: WorkBudget): string {
  const start = skipSpace(text, 0, text.length);
  for (const [open, close] of REASONING_TAGS) {
    const closeAt = text.indexOf(close);
    if (text.startsWith(open, start)) return blank(text, closeAt < 0 ? text.length : closeAt + close.length);
    if (
      closeAt >= 0 &&
      text.lastIndexOf(open, closeAt) < 0 &&
      !hasCallMarkerBefore(text, closeAt) &&
      !isInsideJson(text, closeAt, budget)
    ) {
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

/**
 * Whether a value that may be a call, starting before `at`, is read past it (parsed or not), or
 * the budget ran out before that was known.
 */
function isInsideJson(text: string, at: number, budget: WorkBudget): boolean {
  let pos = 0;
  while (pos < at) {
    const c = text.charCodeAt(pos);
    if ((c !== 0x7b && c !== 0x5b) || !mayStartCallJson(text, pos, text.length)) {
      pos++;
      continue;
    }
    const parsed = parseTolerantValue(text, pos, text.length, { budget });
    if (!parsed.ok && parsed.reason === 'budget') return true;
    const reached = parsed.ok ? parsed.end : parsed.at;
    if (reached > at) return true;
    // A value read whole is skipped; after a failure, what it held may still be a value.
    pos = parsed.ok || (parsed.reason === 'depth' && parsed.at > pos) ? reached : pos + 1;
  }
  return false;
}

function blank(text: string, end: number): string {
  return ' '.repeat(end) + text.slice(end);
}
