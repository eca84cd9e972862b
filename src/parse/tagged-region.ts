import { callFromParts, type CandidateCall } from './call-shapes';
import { isJsonObject } from './json-value';
import { skipSpace } from './marker-finder';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';
import { skipFillers } from './value-sequence';

/** Work allowed to a read up to a closing tag beyond twice its length: its parses' overheads. */
const CLOSED_READ_BASE = 1024;

/** Calls read from a region, where the reading ended, and the furthest character it read. */
export interface RegionCalls {
  readonly calls: readonly CandidateCall[];
  readonly end: number;
  readonly reached: number;
  /** Whether a read stopped at the soft limit would surely find no calls either. */
  readonly cutBefore: boolean;
}

/**
 * Reads calls from `text[from, to)`, charging `budget`, telling whether a read stopped at
 * `softLimit` would fail.
 */
export type RegionReader = (from: number, to: number, softLimit: number, budget: WorkBudget) => RegionCalls;

/** The bounds of the text after one opening tag. */
export interface TaggedRegion {
  readonly from: number;
  /** The next opening tag, or the end of the text. */
  readonly regionEnd: number;
  /** The first closing tag at or after `from`, or -1. */
  readonly closeAt: number;
  /**
   * Whether the next opening tag may sit inside this call's argument strings, so the call must
   * first be read past it: whenever another opening tag follows, even after a closing tag, which
   * may be quoted too (`"Example: </function><function=rm>..."`).
   */
  readonly mayQuoteNext: boolean;
}

/**
 * Reads the calls after an opening tag. First, when `mayQuoteNext`, with no bound, so a tag
 * quoted inside an argument string neither ends nor starts a call; then up to the next opening
 * tag, unless the first read shows that would fail; then up to the first closing tag, which
 * recovers a brace dropped just before it, unless the read before shows that would fail too.
 * Reads are charged to `budget`, which keeps a scan over all the tags linear, and no read is made
 * that could only repeat a failure, so a broken call costs about its length. The read up to the
 * closing tag repeats the one before it up to there, already charged, so it has an allowance of
 * its own: it stays within the region, once per region.
 */
export function readTaggedRegion(
  text: string,
  region: TaggedRegion,
  budget: WorkBudget,
  read: RegionReader,
): RegionCalls | undefined {
  const { from, regionEnd, closeAt } = region;
  const closes = closeAt >= from && closeAt < regionEnd;
  if (region.mayQuoteNext) {
    const unbounded = read(from, text.length, regionEnd, budget);
    if (unbounded.calls.length > 0) return unbounded;
    // A read that stopped before the region's end would stop the same way within it.
    if (unbounded.reached < regionEnd || unbounded.cutBefore) return closes ? readClosed(region, read) : undefined;
  }
  const bounded = read(from, regionEnd, closes ? closeAt : -1, budget);
  if (bounded.calls.length > 0) return bounded;
  // Likewise a read that stopped before the closing tag, or in a string running across it.
  if (!closes || bounded.reached < closeAt || bounded.cutBefore) return undefined;
  return readClosed(region, read);
}

function readClosed(region: TaggedRegion, read: RegionReader): RegionCalls | undefined {
  const { from, closeAt } = region;
  const closed = read(from, closeAt, -1, { remaining: 2 * (closeAt - from) + CLOSED_READ_BASE });
  return closed.calls.length > 0 ? closed : undefined;
}

/**
 * The end of a call's span: past `closeTag` (or the first of several that is there) when only
 * fillers before `limit` (the next opening tag) separate it from `end`.
 */
export function spanEnd(text: string, end: number, limit: number, closeTag: string | readonly string[]): number {
  const after = skipFillers(text, end, limit, true);
  const tags = typeof closeTag === 'string' ? [closeTag] : closeTag;
  const tag = tags.find((t) => text.startsWith(t, after));
  return tag === undefined ? end : after + tag.length;
}

/**
 * A reader of a call whose name (and id) a marker gave and whose arguments are one JSON object
 * (Llama `<function=name>{...}`, DeepSeek, Kimi, gpt-oss): no call when they are anything else.
 */
export function jsonArgumentsReader(text: string, name: string, id?: string): RegionReader {
  return (from, to, softLimit, budget) => {
    const parsed = parseTolerantValue(text, skipSpace(text, from, to), to, { budget, softLimit });
    const call = parsed.ok && isJsonObject(parsed.value) ? callFromParts(name, parsed.value, id, parsed) : undefined;
    const calls: CandidateCall[] = call === undefined ? [] : [call];
    if (parsed.ok) return { calls, end: parsed.end, reached: parsed.end, cutBefore: false };
    return { calls, end: from, reached: parsed.at, cutBefore: parsed.stringAcrossSoftLimit };
  };
}
