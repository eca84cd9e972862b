/** A result cut to fit the model's context. */
export interface BoundedText {
  readonly text: string;
  readonly truncated: boolean;
  /** Length of the original text, in code points. */
  readonly totalChars: number;
}

const marker = (omitted: number) => `\n\n... [${omitted} characters omitted by dispatch layer] ...\n\n`;

/**
 * Keeps the head and the tail of `text` around an omission marker so that the whole output,
 * marker included, is at most `maxChars` code points. The beginning carries context, the end the
 * final state and error messages; the marker tells the model the middle exists.
 */
export function boundResult(text: string, maxChars: number): BoundedText {
  if (text.length <= maxChars) return { text, truncated: false, totalChars: codePointLength(text) };
  const points = Array.from(text);
  const total = points.length;
  if (total <= maxChars) return { text, truncated: false, totalChars: total };
  let keep = Math.max(0, maxChars - marker(total).length);
  // The marker's digit count depends on what is omitted; shrink until everything fits.
  while (keep + 1 + marker(total - keep - 1).length <= maxChars) keep++;
  while (keep > 0 && keep + marker(total - keep).length > maxChars) keep--;
  const head = Math.ceil(keep / 2);
  const tail = keep - head;
  const bounded = points.slice(0, head).join('') + marker(total - keep) + (tail > 0 ? points.slice(total - tail).join('') : '');
  return { text: bounded, truncated: true, totalChars: total };
}

/** Length of a string in Unicode code points. */
export function codePointLength(text: string): number {
  let surrogates = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) surrogates++;
  }
  return text.length - surrogates;
}

/** The code points [offset, offset + limit) of `text`. */
export function sliceCodePoints(text: string, offset: number, limit: number): string {
  return Array.from(text).slice(offset, offset + limit).join('');
}
