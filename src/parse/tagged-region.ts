import type { CandidateCall } from './call-shapes';
import { skipFillers } from './value-sequence';

/** Calls read from a region, where the reading ended, and the furthest character it read. */
export interface RegionCalls {
  readonly calls: readonly CandidateCall[];
  readonly end: number;
  readonly reached: number;
  /** Whether a read stopped at the soft limit would surely find no calls either. */
  readonly cutBefore: boolean;
}

/** Reads calls from `text[from, to)`, telling whether a read stopped at `softLimit` would fail. */
export type RegionReader = (from: number, to: number, softLimit: number) => RegionCalls;

/** The bounds of the text after one opening tag. */
export interface TaggedRegion {
  readonly from: number;
  /** The next opening tag, or the end of the text. */
  readonly regionEnd: number;
  /** The first closing tag at or after `from`, or -1. */
  readonly closeAt: number;
  /**
   * Whether the next opening tag may sit inside this call's argument strings, so the call must
   * first be read past it: for tags with a closing tag, when that comes after the next opening.
   */
  readonly mayQuoteNext: boolean;
}

/**
 * Reads the calls after an opening tag. First, when `mayQuoteNext`, with no bound, so a tag
 * quoted inside an argument string neither ends nor starts a call; then up to the next opening
 * tag, unless the first read shows that would fail; then up to the first closing tag, which
 * recovers a brace dropped just before it. Reads are charged to the caller's work budget, which
 * keeps a scan over all the tags linear.
 */
export function readTaggedRegion(text: string, region: TaggedRegion, read: RegionReader): RegionCalls | undefined {
  const { from, regionEnd } = region;
  if (region.mayQuoteNext) {
    const unbounded = read(from, text.length, regionEnd);
    if (unbounded.calls.length > 0) return unbounded;
    // A read that stopped before the region's end would stop the same way within it.
    if (unbounded.reached < regionEnd || unbounded.cutBefore) return readClosed(region, read);
  }
  const bounded = read(from, regionEnd, -1);
  if (bounded.calls.length > 0) return bounded;
  return readClosed(region, read);
}

function readClosed(region: TaggedRegion, read: RegionReader): RegionCalls | undefined {
  const { from, regionEnd, closeAt } = region;
  if (closeAt < from || closeAt >= regionEnd) return undefined;
  const closed = read(from, closeAt, -1);
  return closed.calls.length > 0 ? closed : undefined;
}

/**
 * The end of a call's span: past `closeTag` when only fillers before `limit` (the next opening
 * tag) separate it from `end`.
 */
export function spanEnd(text: string, end: number, limit: number, closeTag: string): number {
  const after = skipFillers(text, end, limit, true);
  return text.startsWith(closeTag, after) ? after + closeTag.length : end;
}
