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
const WHITESPACE = /\s/;

/** Per UTF-16 index of `text` (`size` of them), 1 where a character of {@link UNSAFE} starts. */
function unsafeMarks(text: string, size: number): Uint8Array {
  const marks = new Uint8Array(size);
  for (const match of text.matchAll(UNSAFE_ALL)) marks[match.index!] = 1;
  return marks;
}

let unsafeUnits: Uint8Array | undefined;
/** Per high surrogate, its 1,024 characters' marks; null when none is unsafe (emoji rows); undefined until seen. */
const unsafeAstral: (Uint8Array | null | undefined)[] = new Array(0x400).fill(undefined);

/**
 * For every BMP code unit, 1 when it is a character of {@link UNSAFE}: found by running the regex
 * once over all of them (surrogates as spaces; they are not characters alone), on the first
 * non-ASCII text (2-10 ms, once). A scan then reads a byte per character, allocating nothing:
 * running the Unicode-property regex over non-ASCII text took 6-7 ns per character, 10x its ASCII
 * speed, and firstUnsafeChar built a RegExp per text (1,150 characters: 7.4 µs before, 3.7 after).
 */
function unsafeTable(): Uint8Array {
  if (unsafeUnits !== undefined) return unsafeUnits;
  const units = new Uint16Array(0x10000);
  for (let unit = 0; unit < 0x10000; unit++) units[unit] = unit >= 0xd800 && unit <= 0xdfff ? 0x20 : unit;
  let all = '';
  for (let start = 0; start < 0x10000; start += 0x1000) all += String.fromCharCode(...units.subarray(start, start + 0x1000));
  return (unsafeUnits = unsafeMarks(all, 0x10000));
}

/** The marks of the characters past the BMP that high surrogate `high` starts, found when a text first holds one of them. */
function astralRow(high: number): Uint8Array | null {
  const known = unsafeAstral[high - 0xd800];
  if (known !== undefined) return known;
  let row = '';
  for (let low = 0xdc00; low <= 0xdfff; low++) row += String.fromCharCode(high, low);
  // A surrogate pair is one character, two UTF-16 indexes.
  const pairs = unsafeMarks(row, 0x800);
  const marks = pairs.some((mark) => mark === 1) ? pairs.filter((_, index) => index % 2 === 0) : null;
  unsafeAstral[high - 0xd800] = marks;
  return marks;
}

/**
 * The UTF-16 index of the first character of {@link UNSAFE} in `text` at or after `from` (not
 * inside a surrogate pair), or -1. `keepLines` lets LF and TAB pass. Allocates nothing.
 */
function nextUnsafe(text: string, from: number, keepLines = false): number {
  const table = unsafeTable();
  for (let i = from; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) {
      if (table[unit] === 1 && !(keepLines && (unit === 0x0a || unit === 0x09))) return i;
      continue;
    }
    // A surrogate alone is no character of UNSAFE; a pair is looked up in its high surrogate's row.
    const low = unit <= 0xdbff && i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
    if ((low & 0xfc00) !== 0xdc00) continue;
    if (astralRow(unit)?.[low - 0xdc00] === 1) return i;
    i++;
  }
  return -1;
}

/** `\uXXXX`, or `\u{XXXXX}` past the BMP (the tag characters U+E0000-E007F, musical format controls). */
const escaped = (code: number) => (code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`);

/**
 * `text` with every character of {@link UNSAFE} written as `\uXXXX`. `multiline` keeps LF and
 * TAB (an output body shown over several lines); CR is escaped either way.
 */
export function terminalText(text: string, multiline = false): string {
  if (PLAIN_ASCII.test(text)) return text;
  let at = nextUnsafe(text, 0, multiline);
  if (at === -1) return text;
  let shown = '';
  let copied = 0;
  while (at !== -1) {
    const code = text.codePointAt(at)!;
    shown += text.slice(copied, at) + escaped(code);
    copied = at + (code > 0xffff ? 2 : 1);
    at = nextUnsafe(text, copied, multiline);
  }
  return shown + text.slice(copied);
}

/**
 * A name or id as one word of a line: as is when it is plain (no whitespace, no character from
 * {@link UNSAFE}, not empty), else quoted as JSON with those characters escaped too
 * (JSON.stringify leaves DEL, C1 and the format characters raw), so that it cannot pass for
 * several words or for an escape it does not hold.
 */
export function terminalWord(value: string): string {
  if (value !== '' && !WHITESPACE.test(value) && (PLAIN_ASCII.test(value) || nextUnsafe(value, 0) === -1)) return value;
  return terminalText(JSON.stringify(value));
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
  for (let at = nextUnsafe(text, 0); at !== -1; at = nextUnsafe(text, at + (text.codePointAt(at)! > 0xffff ? 2 : 1))) {
    if (taken !== undefined && taken(text, at)) continue;
    return { code: text.codePointAt(at)!, position: codePointsBefore(text, at) + 1 };
  }
  return undefined;
}

/** The code points of `text` before UTF-16 `index` (a surrogate pair is one), counted without a copy. */
function codePointsBefore(text: string, index: number): number {
  let count = index;
  for (let i = 0; i < index; i++) if ((text.charCodeAt(i) & 0xfc00) === 0xdc00 && i > 0 && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800) count--;
  return count;
}
