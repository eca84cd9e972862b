import { terminalText } from '../events/terminal-text';
import { shortened } from '../pipeline';

/**
 * Longest reason written outside dispatch that the model reads (an approver's denial, the policy
 * endpoint's answer), in characters before escaping: a longer one is cut, with `...` after.
 */
export const REASON_TEXT_CHARS = 1_000;

/**
 * A reason written outside dispatch as the model reads it in a BLOCKED error: a human's denial
 * (ResolveApproval's `reason`) or the policy endpoint's (its answer's `reason`). Trimmed, cut to
 * {@link REASON_TEXT_CHARS}, control and invisible characters written `\uXXXX` (a line break in it
 * would read as dispatch's own text); undefined when empty.
 */
export function reasonText(text: string): string | undefined {
  const trimmed = text.trim();
  return trimmed === '' ? undefined : terminalText(shortened(trimmed, REASON_TEXT_CHARS));
}
