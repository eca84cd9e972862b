const REASONING_TAGS: readonly (readonly [string, string])[] = [
  ['<think>', '</think>'],
  ['<thinking>', '</thinking>'],
];

/**
 * The text with reasoning blocks (`<think>...</think>`, `<thinking>...</thinking>`) blanked out
 * with spaces, same length, so calls drafted while thinking are not taken as calls and offsets
 * still point into the original. A closing tag with no opening one before it closes a block
 * that began with the text (chat templates often put the opening tag in the prompt); an
 * opening tag never closed runs to the end.
 */
export function maskReasoning(text: string): string {
  let masked = text;
  for (const [open, close] of REASONING_TAGS) masked = maskBlocks(masked, open, close);
  return masked;
}

function maskBlocks(text: string, open: string, close: string): string {
  const blocks: [number, number][] = [];
  let pos = 0;
  const firstOpen = text.indexOf(open);
  const firstClose = text.indexOf(close);
  if (firstClose >= 0 && (firstOpen < 0 || firstClose < firstOpen)) {
    pos = firstClose + close.length;
    blocks.push([0, pos]);
  }
  for (;;) {
    const start = text.indexOf(open, pos);
    if (start < 0) break;
    const end = text.indexOf(close, start + open.length);
    if (end < 0) {
      blocks.push([start, text.length]);
      break;
    }
    pos = end + close.length;
    blocks.push([start, pos]);
  }
  if (blocks.length === 0) return text;
  const parts: string[] = [];
  let copied = 0;
  for (const [start, end] of blocks) {
    parts.push(text.slice(copied, start), ' '.repeat(end - start));
    copied = end;
  }
  parts.push(text.slice(copied));
  return parts.join('');
}
