import type { CandidateCall } from './call-shapes';
import { skipFillers } from './value-sequence';

/** Calls read from a region, and where the reading ended. */
export interface RegionCalls {
  readonly calls: readonly CandidateCall[];
  readonly end: number;
}

/**
 * Reads the calls after an opening tag. First up to `regionEnd` (the next opening tag), so a
 * closing tag quoted inside an argument string does not cut the call short; if that finds
 * nothing, up to the first closing tag at `closeAt`, which recovers a brace the model dropped
 * just before the tag. Each region is read at most twice, so a scan over tags stays linear.
 */
export function readTaggedRegion(
  from: number,
  regionEnd: number,
  closeAt: number,
  read: (from: number, to: number) => RegionCalls,
): RegionCalls | undefined {
  const first = read(from, regionEnd);
  if (first.calls.length > 0) return first;
  if (closeAt < from || closeAt >= regionEnd) return undefined;
  const second = read(from, closeAt);
  return second.calls.length > 0 ? second : undefined;
}

/** The end of a call's span: past `closeTag` when only fillers separate it from `end`. */
export function spanEnd(text: string, end: number, limit: number, closeTag: string): number {
  const after = skipFillers(text, end, limit, true);
  return text.startsWith(closeTag, after) ? after + closeTag.length : end;
}
