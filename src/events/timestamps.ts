import { create } from '@bufbuild/protobuf';
import { TimestampSchema, type Timestamp } from '@bufbuild/protobuf/wkt';

/** How often the monotonic clock is re-anchored to the wall clock, in ms. @default 10000 */
const REANCHOR_MS = 10_000;
let anchor = Date.now() - performance.now();
let anchoredAt = performance.now();

/**
 * Epoch milliseconds with sub-millisecond precision: the monotonic clock, re-anchored to the wall
 * clock every few seconds so that a long-running process does not drift away from it.
 */
export function nowMs(): number {
  const mono = performance.now();
  if (mono - anchoredAt > REANCHOR_MS) {
    anchor = Date.now() - mono;
    anchoredAt = mono;
  }
  return anchor + mono;
}

/** A google.protobuf.Timestamp from epoch milliseconds (fractions kept as nanoseconds). */
export function timestampOf(ms: number): Timestamp {
  const seconds = Math.floor(ms / 1000);
  return create(TimestampSchema, { seconds: BigInt(seconds), nanos: Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6)) });
}
