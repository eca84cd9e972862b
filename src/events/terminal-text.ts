/**
 * Characters a terminal acts on or hides, which text from a client, a model or a tool is shown
 * with escaped (`\u001b`), chosen by Unicode property so that none is missed: controls (\p{Cc}:
 * C0, DEL and C1; ESC starts sequences that set the clipboard, OSC 52, or clear the screen; CR and
 * LF start a line that reads as dispatch's own; U+009B is a one-character CSI), format characters
 * (\p{Cf}: zero-width, joiners, bidirectional overrides and isolates, the soft hyphen, the byte
 * order mark, Arabic number signs, Egyptian hieroglyph and musical format controls, the tag
 * characters), line and paragraph separators (\p{Zl}, \p{Zp}), and the other default-ignorable code
 * points a terminal draws as nothing (Hangul fillers, the combining grapheme joiner, unassigned
 * ones such as U+2065), but not variation selectors (an emoji's U+FE0F). Private use and
 * noncharacters are drawn as a glyph or a box, so are shown as they are.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]|(?!\p{Variation_Selector})\p{Default_Ignorable_Code_Point}/u;
/** Printable ASCII and nothing else: no character of {@link UNSAFE}, and no whitespace but the space (the fast path). */
const PLAIN_ASCII = /^[\x20-\x7e]*$/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'gu');

/** `\uXXXX`, or `\u{XXXXX}` past the BMP (the tag characters U+E0000-E007F, musical format controls). */
const escaped = (char: string) => {
  const code = char.codePointAt(0)!;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/**
 * `text` with every character of {@link UNSAFE} written as `\uXXXX`. `multiline` keeps LF and
 * TAB (an output body shown over several lines); CR is escaped either way.
 */
export function terminalText(text: string, multiline = false): string {
  if (PLAIN_ASCII.test(text)) return text;
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

/** Whether `char` (one code point) is one of {@link UNSAFE}. */
export function isUnsafeChar(char: string): boolean {
  return UNSAFE.test(char);
}

/**
 * The first character of `text` from {@link UNSAFE} that `taken` (when given) does not let pass
 * at its UTF-16 `index`: its code point and its position, counted in code points from 1.
 */
export function firstUnsafeChar(
  text: string,
  taken?: (text: string, index: number) => boolean,
): { readonly code: number; readonly position: number } | undefined {
  if (PLAIN_ASCII.test(text)) return undefined;
  const scan = new RegExp(UNSAFE_ALL);
  for (let match = scan.exec(text); match !== null; match = scan.exec(text)) {
    if (taken !== undefined && taken(text, match.index)) continue;
    return { code: match[0].codePointAt(0)!, position: [...text.slice(0, match.index)].length + 1 };
  }
  return undefined;
}
