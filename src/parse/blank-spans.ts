/** A stretch `text[start, end)` of a text. */
export interface TextSpan {
  readonly start: number;
  readonly end: number;
}

/**
 * The text with each span (in order, not overlapping) replaced by spaces of the same length, so
 * offsets still point into the original; the text itself when there is none.
 */
export function blankSpans(text: string, spans: Iterable<TextSpan>): string {
  const kept: string[] = [];
  let copied = 0;
  for (const { start, end } of spans) {
    kept.push(text.slice(copied, start), ' '.repeat(end - start));
    copied = end;
  }
  if (copied === 0) return text;
  kept.push(text.slice(copied));
  return kept.join('');
}
