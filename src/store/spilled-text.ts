/**
 * Code points per chunk of a spilled text. A ReadResult page reads the chunks it spans, not the
 * whole text: a page of `limit` code points moves at most `limit + 2 x CHUNK_POINTS` of them (a
 * chunk is at most 32 KiB of UTF-8), whatever the text's length (up to 16 Mi code points).
 */
export const CHUNK_POINTS = 8192;

/** A page of a spilled text: its code points [offset, offset + limit) and the whole text's length. */
export interface TextPage {
  readonly text: string;
  /** Length of the whole text, in code points. */
  readonly totalChars: number;
}

/**
 * Where a spilled text's chunks begin: `starts[k]` is the UTF-16 index of code point
 * k x CHUNK_POINTS, with text.length last. Absent when the text holds no surrogate (a code point
 * is then a unit): most texts, which need no walk.
 */
export interface ChunkIndex {
  readonly totalChars: number;
  readonly starts?: Uint32Array;
}

const SURROGATE = /[\ud800-\udfff]/;
const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * The chunk index of `text`, in one walk when it holds a surrogate. Code points are counted as
 * codePointLength counts them (a lone surrogate is one), so pages agree with ReadResult's offsets.
 */
export function indexChunks(text: string): ChunkIndex {
  if (!SURROGATE.test(text)) return { totalChars: text.length };
  const starts: number[] = [0];
  let points = 0;
  for (let i = 0; i < text.length; points++) {
    if (points > 0 && points % CHUNK_POINTS === 0) starts.push(i);
    i += isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
  }
  starts.push(text.length);
  return { totalChars: points, starts: Uint32Array.from(starts) };
}

/** The UTF-16 index where chunk `k` of `text` begins (text.length past the last). */
function chunkStart(text: string, index: ChunkIndex, k: number): number {
  if (!index.starts) return Math.min(text.length, k * CHUNK_POINTS);
  return index.starts[Math.min(k, index.starts.length - 1)]!;
}

/** The chunks of `text`, CHUNK_POINTS code points each (the last one shorter); none for ''. */
export function chunksOf(text: string, index: ChunkIndex): string[] {
  const count = Math.ceil(index.totalChars / CHUNK_POINTS);
  const chunks: string[] = [];
  for (let k = 0; k < count; k++) chunks.push(text.slice(chunkStart(text, index, k), chunkStart(text, index, k + 1)));
  return chunks;
}

/**
 * The code points [offset, offset + limit) of `text`, walking from its start: callers pass a text
 * of a few chunks at most.
 */
export function slicePoints(text: string, offset: number, limit: number): string {
  if (!SURROGATE.test(text)) return text.slice(offset, offset + limit);
  let start = 0;
  for (let n = 0; n < offset && start < text.length; n++) start += isHigh(text.charCodeAt(start)) && isLow(text.charCodeAt(start + 1)) ? 2 : 1;
  let end = start;
  for (let n = 0; n < limit && end < text.length; n++) end += isHigh(text.charCodeAt(end)) && isLow(text.charCodeAt(end + 1)) ? 2 : 1;
  return text.slice(start, end);
}

/** The page [offset, offset + limit) of an indexed text, at a cost of the page and a chunk. */
export function pageOf(text: string, index: ChunkIndex, offset: number, limit: number): TextPage {
  const from = Math.min(Math.max(0, offset), index.totalChars);
  if (!index.starts) return { text: text.slice(from, from + limit), totalChars: index.totalChars };
  const k = Math.floor(from / CHUNK_POINTS);
  const start = chunkStart(text, index, k);
  const skip = from - k * CHUNK_POINTS;
  // A code point is at most two units: this window holds the page.
  const window = text.slice(start, start + 2 * (skip + limit));
  return { text: slicePoints(window, skip, limit), totalChars: index.totalChars };
}

/**
 * The page [offset, offset + limit) of a text of `totalChars` code points read as the chunks
 * `chunks`, the first of them chunk `first` of `chunkPoints` code points each.
 */
export function pageOfChunks(chunks: readonly string[], first: number, chunkPoints: number, totalChars: number, offset: number, limit: number): TextPage {
  const joined = chunks.length === 1 ? chunks[0]! : chunks.join('');
  return { text: slicePoints(joined, Math.max(0, offset - first * chunkPoints), limit), totalChars };
}

/** How a fullTextNotKeptWarning starts. */
const NOT_KEPT_START = 'the full text of this result (';

/**
 * The warning of a bounded result whose full text (`totalChars` code points) the store did not
 * keep, so that its handle is taken off: ReadResult would not find it.
 */
export function fullTextNotKeptWarning(totalChars: number): string {
  return `${NOT_KEPT_START}${totalChars} characters) could not be kept, so it cannot be read with ReadResult; only the part shown here is available`;
}

/** Whether `warning` is a {@link fullTextNotKeptWarning}: its result's output is not its whole text. */
export const isFullTextNotKeptWarning = (warning: string): boolean => warning.startsWith(NOT_KEPT_START);
