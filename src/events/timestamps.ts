import { create } from '@bufbuild/protobuf';
import { TimestampSchema, type Timestamp } from '@bufbuild/protobuf/wkt';

/** How often the monotonic clock is re-anchored to the wall clock, in ms. @default 10000 */
const REANCHOR_MS = 10_000;
/**
 * The longest step back of a re-anchor that the clock holds still through, in ms; a longer one (the
 * wall clock was set back) is taken.
 */
const MAX_HELD_STEP_MS = 1_000;
let anchor = Date.now() - performance.now();
let anchoredAt = performance.now();
/** The latest time given. */
let latest = 0;

/**
 * Epoch milliseconds with sub-millisecond precision: the monotonic clock, re-anchored to the wall
 * clock every few seconds so that a long-running process does not drift away from it. Never less
 * than a time it gave before, but after a step back of more than MAX_HELD_STEP_MS.
 */
export function nowMs(): number {
  const mono = performance.now();
  if (mono - anchoredAt > REANCHOR_MS) {
    anchor = Date.now() - mono;
    anchoredAt = mono;
  }
  const now = anchor + mono;
  // A re-anchor moves the anchor by up to a millisecond or so either way (Date.now()'s millisecond
  // floor, the wall clock's drift): a step back dated a fast call's TOOL_POST before its TOOL_PRE,
  // and an event before the one it follows. The clock holds still until it catches up instead.
  if (now < latest && latest - now <= MAX_HELD_STEP_MS) return latest;
  latest = now;
  return now;
}

/** A google.protobuf.Timestamp from epoch milliseconds (fractions kept as nanoseconds). */
export function timestampOf(ms: number): Timestamp {
  const seconds = Math.floor(ms / 1000);
  return create(TimestampSchema, { seconds: BigInt(seconds), nanos: Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6)) });
}
