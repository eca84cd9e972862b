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

const OMISSION = / \.\.\. \[(\d+) characters omitted\]$/;

/**
 * `text` as its head and the code points of the whole text it was cut from: a text already cut
 * (bound-failure.ts holds a failure's message to MAX_ERROR_MESSAGE_CHARS) says in its
 * {@link omission} how much it left out; another is its own head and whole.
 */
export function headAndWhole(text: string): { head: string; whole: number } {
  const at = text.lastIndexOf(' ... [');
  const marked = at === -1 ? null : OMISSION.exec(text.slice(at));
  const head = marked ? text.slice(0, at) : text;
  return { head, whole: codePointLength(head) + (marked ? Number(marked[1]) : 0) };
}

/** The output of `json`: its JSON, with its message and suggestion cut as far as needed (and the floor allows) to take at most `maxChars` code points. */
export function boundErrorOutput(json: ErrorJson, maxChars: number): string {
  let output = JSON.stringify(json);
  if (output.length <= maxChars) return output;
  let over = codePointLength(output) - maxChars;
  let shown = json;
  for (const [field, floor] of [['message', ERROR_MESSAGE_FLOOR], ['suggestion', ERROR_SUGGESTION_FLOOR]] as const) {
    // A text cut where the failure entered the call is cut from its head, its marker counting from its whole.
    const { head, whole } = headAndWhole(json[field]);
    const points = codePointLength(json[field]);
    const headPoints = codePointLength(head);
    // Cut only where the marker takes less than what it leaves out.
    if (over <= 0 || points - floor <= omission(whole).length) continue;
    let keep = points;
    // Escapes ("\n", "\"") make the JSON longer than the text: cut again until it fits (a few rounds at most).
    while (over > 0 && keep > floor) {
      keep = Math.min(headPoints, Math.max(floor, keep - over - (keep === points ? omission(whole).length : 0)));
      const next = { ...shown, [field]: sliceCodePoints(head, 0, keep) + omission(whole - keep) };
      const cut = JSON.stringify(next);
      over = codePointLength(cut) - maxChars;
      output = cut;
      shown = next;
    }
  }
  return output;
}
