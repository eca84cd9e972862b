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
 * final state and error messages; the marker tells the model the middle exists. Linear in the
 * text, with no array of its code points (a 16 Mi-character output took ~0.5 s that way).
 */
export function boundResult(text: string, maxChars: number): BoundedText {
  if (text.length <= maxChars) return { text, truncated: false, totalChars: codePointLength(text) };
  const total = codePointLength(text);
  if (total <= maxChars) return { text, truncated: false, totalChars: total };
  return { text: cut(text, total, maxChars, total), truncated: true, totalChars: total };
}

/**
 * `text` (`points` code points) cut to its head and tail around a marker, all within `maxChars`,
 * the marker counting what is omitted of a whole text of `whole` code points. A copy of its own,
 * as shortened's: the slices of V8 keep the whole text alive behind them, and a turn holds its
 * calls' outputs until it ends (a tenant's turn of 32 calls answering 16 MB each held 512 MB and
 * ran dispatchd out of memory, every tenant's calls with it).
 */
function cut(text: string, points: number, maxChars: number, whole: number): string {
  let keep = Math.max(0, maxChars - marker(whole).length);
  // The marker's digit count depends on what is omitted; shrink until everything fits.
  while (keep + 1 + marker(whole - keep - 1).length <= maxChars) keep++;
  while (keep > 0 && keep + marker(whole - keep).length > maxChars) keep--;
  const head = Math.ceil(keep / 2);
  const tail = keep - head;
  const plain = points === text.length;
  const joined = text.slice(0, plain ? head : unitIndex(text, head)) + marker(whole - keep) + (tail > 0 ? text.slice(plain ? text.length - tail : unitIndexFromEnd(text, tail)) : '');
  return Buffer.from(joined, 'utf16le').toString('utf16le');
}

/**
 * A text boundResult bounded, bounded again to `maxChars` when its whole text is not at hand (the
 * store lost or refused it): the head and tail are the bounded text's own (a shorter bound keeps
 * less of each) and the marker counts what is omitted of the whole text, whose length the bounded
 * text's marker tells; before, the cut counted the first marker as omitted characters.
 */
export function reboundResult(bounded: string, maxChars: number): string {
  const points = codePointLength(bounded);
  const whole = wholeLength(bounded, points);
  if (whole === undefined) return boundResult(bounded, maxChars).text;
  return points <= maxChars ? bounded : cut(bounded, points, maxChars, whole);
}

/**
 * A text of `whole` code points bounded to `maxChars` from its ends alone: `ends` joins its first
 * and its last `maxChars` code points (or more; the whole text when that is shorter), so that a
 * stored text is cut from two pages, not read whole (up to 8 MiB each). The same text as
 * boundResult's of the whole.
 */
export function boundFromEnds(ends: string, maxChars: number, whole: number): string {
  const points = codePointLength(ends);
  return points === whole && whole <= maxChars ? ends : cut(ends, points, maxChars, whole);
}

/** The code points of the whole text `bounded` was bounded from (its marker's count, where boundResult put it), or its own when it is whole. */
export function wholeChars(bounded: string): number {
  const points = codePointLength(bounded);
  return wholeLength(bounded, points) ?? points;
}

/** The length of the whole text that `bounded` (`points` code points) was bounded from, read from its marker where boundResult put it. */
function wholeLength(bounded: string, points: number): number | undefined {
  for (let digits = 1; digits <= 10; digits++) {
    const keep = points - marker(10 ** (digits - 1)).length;
    if (keep < 0) return undefined;
    const at = unitIndex(bounded, Math.ceil(keep / 2));
    const omitted = /^\n\n\.\.\. \[(\d+) characters omitted by dispatch layer\] \.\.\.\n\n/.exec(bounded.slice(at, at + marker(0).length + digits));
    if (omitted?.[1]!.length === digits) return keep + Number(omitted[1]);
  }
  return undefined;
}

const SURROGATE = /[\ud800-\udfff]/;
const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * Length of a string in Unicode code points: a surrogate pair is one, and so is a lone surrogate
 * (as `Array.from` and a UTF-8 encoder see it), so that lengths and slices agree and paging with
 * ReadResult always moves on.
 */
export function codePointLength(text: string): number {
  // Most texts hold no surrogate at all: a regular expression finds that ~5x faster than a loop.
  if (!SURROGATE.test(text)) return text.length;
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    if (isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1))) {
      pairs++;
      i++;
    }
  }
  return text.length - pairs;
}

/** The UTF-16 index where code point `points` of `text` begins (text.length past the end). */
function unitIndex(text: string, points: number): number {
  let i = 0;
  for (let n = 0; n < points && i < text.length; n++) i += isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
  return i;
}

/** The UTF-16 index where the last `points` code points of `text` begin. */
function unitIndexFromEnd(text: string, points: number): number {
  let i = text.length;
  for (let n = 0; n < points && i > 0; n++) i -= i >= 2 && isLow(text.charCodeAt(i - 1)) && isHigh(text.charCodeAt(i - 2)) ? 2 : 1;
  return i;
}

/** The first `max` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair. */
export function cutUnits(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, isHigh(text.charCodeAt(max - 1)) ? max - 1 : max);
}

/**
 * `text` cut to its first `max` UTF-16 units with `...` after, when longer: a name or id a model
 * made up may be megabytes (only the message limit bounds it). The cut is a copy of its own: V8
 * keeps the whole of a long string alive behind a slice of it.
 */
export function shortened(text: string, max: number): string {
  if (text.length <= max) return text;
  return Buffer.from(`${cutUnits(text, max)}...`, 'utf16le').toString('utf16le');
}

/**
 * The code points [offset, offset + limit) of `text`, walking from its start without building an
 * array (the store's, which pages a spilled text by its chunks: see store/spilled-text.ts).
 */
export { slicePoints as sliceCodePoints } from '../store/spilled-text';
