import type { ErrorJson } from '../errors';
import { codePointLength, sliceCodePoints } from './bound-result';

/**
 * A failed call's output held to its tool's max_result_chars as a successful one is (an HTTP 400
 * quotes up to 500 characters of its body, a validation failure lists every error: a tool with
 * max_result_chars 100 gave the model an 864-character error). Only the free text is cut: the
 * message first, then the suggestion, each to its head and a marker counting what it left out, so
 * the output stays valid JSON with every field. Never below the floor: the fixed fields, the first
 * ERROR_MESSAGE_FLOOR code points of the message and ERROR_SUGGESTION_FLOOR of the suggestion (a
 * cut error has no handle: ReadResult never holds an error), which may exceed a small bound.
 */

/** Code points of its message a cut error keeps at least: enough to say what went wrong. */
export const ERROR_MESSAGE_FLOOR = 80;
/** Code points of its suggestion a cut error keeps at least, once its message is at its floor. */
export const ERROR_SUGGESTION_FLOOR = 40;

/** What a text cut to its head says in place of its other `omitted` code points. */
export const omission = (omitted: number): string => ` ... [${omitted} characters omitted]`;

/** The output of `json`: its JSON, with its message and suggestion cut as far as needed (and the floor allows) to take at most `maxChars` code points. */
export function boundErrorOutput(json: ErrorJson, maxChars: number): string {
  let output = JSON.stringify(json);
  if (output.length <= maxChars) return output;
  let over = codePointLength(output) - maxChars;
  let shown = json;
  for (const [field, floor] of [['message', ERROR_MESSAGE_FLOOR], ['suggestion', ERROR_SUGGESTION_FLOOR]] as const) {
    const text = json[field];
    const points = codePointLength(text);
    // Cut only where the marker takes less than what it leaves out.
    if (over <= 0 || points - floor <= omission(points).length) continue;
    let keep = points;
    // Escapes ("\n", "\"") make the JSON longer than the text: cut again until it fits (a few rounds at most).
    while (over > 0 && keep > floor) {
      keep = Math.max(floor, keep - over - (keep === points ? omission(points).length : 0));
      const next = { ...shown, [field]: sliceCodePoints(text, 0, keep) + omission(points - keep) };
      const cut = JSON.stringify(next);
      over = codePointLength(cut) - maxChars;
      output = cut;
      shown = next;
    }
  }
  return output;
}
