import { DispatchError, MAX_ERROR_MESSAGE_CHARS } from '../errors';
import { headAndWhole, omission } from './bound-error';
import { codePointLength, sliceCodePoints } from './bound-result';

/**
 * `text` held to `max` code points: its first `max` and a marker counting the rest, as
 * bound-error.ts cuts an error JSON's message; a text held so already is kept as it is. The cut is a copy of its own: V8 keeps the whole
 * of a long string alive behind a slice of it, and a kept record would keep the megabyte.
 */
export function errorTextHead(text: string, max = MAX_ERROR_MESSAGE_CHARS): string {
  // UTF-16 units are never fewer than code points: most texts end the test here.
  if (text.length <= max) return text;
  const points = codePointLength(text);
  if (points <= max) return text;
  // Held to `max` already, its marker counting the whole (redaction.ts bounds a long message so before redacting it).
  const { head } = headAndWhole(text);
  if (head !== text && codePointLength(head) <= max) return text;
  return Buffer.from(sliceCodePoints(text, 0, max) + omission(points - max), 'utf16le').toString('utf16le');
}

/**
 * A failure as the call keeps it: its message and suggestion held to MAX_ERROR_MESSAGE_CHARS (a
 * worker's, an MCP server's or a built-in's text may be megabytes), every other field as it was,
 * the failure itself in `cause`. `error` itself when both fit (as nearly all do).
 */
export function boundedFailure(error: DispatchError): DispatchError {
  const message = errorTextHead(error.message);
  const suggestion = error.suggestion === undefined ? undefined : errorTextHead(error.suggestion);
  if (message === error.message && suggestion === error.suggestion) return error;
  return error.retold(message, { suggestion });
}
