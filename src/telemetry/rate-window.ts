import { checkInteger } from '../options';
import { addCounters, emptyCounters, type ToolCounters } from './tool-counters';

/**
 * The recent window GetToolStats' rates, their alerts and `dispatch_tool_rate` cover: the last
 * `seconds`, in {@link RATE_WINDOW_BUCKETS} buckets of `bucketMs` (the current one filling), so a
 * tool's rates forget calls between `seconds - bucketMs` and `seconds` ago.
 */
export interface RateWindow {
  readonly seconds: number;
  readonly bucketMs: number;
  /** The clock buckets are numbered by (ms since the epoch); replicas sharing Redis share it. */
  readonly now: () => number;
}

/** The window's default length: a quarter of an hour, in one-minute buckets. */
export const DEFAULT_RATE_WINDOW_SECONDS = 900;
/** The window's longest length: a day. */
export const MAX_RATE_WINDOW_SECONDS = 86_400;
/** Buckets per window: what one (tenant, tool) pair keeps of its recent calls, at most. */
export const RATE_WINDOW_BUCKETS = 15;

/** A window of `seconds` (an integer from 1 to a day). */
export function rateWindow(seconds = DEFAULT_RATE_WINDOW_SECONDS, now: () => number = Date.now): RateWindow {
  checkInteger('rateWindowSeconds', seconds, { min: 1, max: MAX_RATE_WINDOW_SECONDS });
  return { seconds, bucketMs: Math.ceil((seconds * 1000) / RATE_WINDOW_BUCKETS), now };
}

/** The number of the bucket `time` falls in. */
export const bucketOf = (window: RateWindow, time = window.now()): number => Math.floor(time / window.bucketMs);

/** The numbers of the buckets the window covers now, oldest first. */
export function windowBuckets(window: RateWindow): number[] {
  const current = bucketOf(window);
  return Array.from({ length: RATE_WINDOW_BUCKETS }, (_, i) => current - RATE_WINDOW_BUCKETS + 1 + i);
}

/** One pair's counts per bucket: at most {@link RATE_WINDOW_BUCKETS}, older ones dropped as calls come. */
export class WindowCounts {
  private readonly byBucket = new Map<number, ToolCounters>();

  constructor(private readonly window: RateWindow) {}

  /** The counts of the current bucket, to add a call to; buckets past the window are dropped. */
  current(): ToolCounters {
    const bucket = bucketOf(this.window);
    let counters = this.byBucket.get(bucket);
    if (counters) return counters;
    for (const old of this.byBucket.keys()) if (old <= bucket - RATE_WINDOW_BUCKETS) this.byBucket.delete(old);
    counters = emptyCounters();
    this.byBucket.set(bucket, counters);
    return counters;
  }

  /** The counts of the buckets the window covers now, summed into `into`. */
  sumInto(into: ToolCounters): ToolCounters {
    const oldest = bucketOf(this.window) - RATE_WINDOW_BUCKETS + 1;
    for (const [bucket, counters] of this.byBucket) {
      if (bucket >= oldest) addCounters(into, counters);
    }
    return into;
  }
}
