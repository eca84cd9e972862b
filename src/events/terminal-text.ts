/**
 * Characters a terminal acts on or hides, which text from a client, a model or a tool is shown
 * with escaped (`\u001b`): C0 controls and DEL (ESC starts sequences that set the clipboard,
 * OSC 52, or clear the screen; CR and LF start a line that reads as dispatch's own), C1 controls
 * (U+009B is a one-character CSI), and the invisible or reordering format characters (zero-width,
 * bidirectional overrides and isolates, line and paragraph separators, the byte order mark, the
 * soft hyphen, Hangul fillers, the combining grapheme joiner, the tag characters U+E0000-E007F),
 * which could make a line read as another.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/u;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'gu');

/** `\uXXXX`, or `\u{XXXXX}` past the BMP (the tag characters U+E0000-E007F, invisible). */
const escaped = (char: string) => {
  const code = char.codePointAt(0)!;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/**
 * `text` with every character of {@link UNSAFE} written as `\uXXXX`. `multiline` keeps LF and
 * TAB (an output body shown over several lines); CR is escaped either way.
 */
export function terminalText(text: string, multiline = false): string {
  return text.replace(UNSAFE_ALL, (char) => (multiline && (char === '\n' || char === '\t') ? char : escaped(char)));
}

/**
 * A name or id as one word of a line: as is when it is plain (no whitespace, no character from
 * {@link UNSAFE}, not empty), else quoted as JSON with those characters escaped too
 * (JSON.stringify leaves DEL, C1 and the format characters raw), so that it cannot pass for
 * several words or for an escape it does not hold.
 */
export function terminalWord(value: string): string {
  if (value !== '' && !/\s/.test(value) && !UNSAFE.test(value)) return value;
  return JSON.stringify(value).replace(UNSAFE_ALL, escaped);
}

/** The first character of `text` from {@link UNSAFE}: its code point and its position, counted in code points from 1. */
export function firstUnsafeChar(text: string): { readonly code: number; readonly position: number } | undefined {
  const match = UNSAFE.exec(text);
  if (match === null) return undefined;
  return { code: match[0].codePointAt(0)!, position: [...text.slice(0, match.index)].length + 1 };
}
