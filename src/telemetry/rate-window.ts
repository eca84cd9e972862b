import { checkInteger } from '../options';
import { addCounters, emptyCounters, type ToolCounters } from './tool-counters';

/**
 * The recent window GetToolStats' rates, their alerts and `dispatch_tool_rate` cover: the last
 * `buckets` buckets of `bucketMs` (the current one filling), `buckets` = ceil(seconds / width), so
 * a tool's rates forget calls between `buckets - 1` and `buckets` bucket widths ago. The width is
 * fixed (telemetry.rate_bucket_seconds), not derived from the window: replicas sharing Redis with
 * different windows read more or fewer of the same buckets.
 */
export interface RateWindow {
  readonly seconds: number;
  readonly bucketMs: number;
  /** Buckets the window covers, the current one included: ceil(seconds / bucket width). */
  readonly buckets: number;
  /** The clock this replica's own buckets are numbered by (ms since the epoch); Redis numbers the shared ones by its TIME. */
  readonly now: () => number;
}

/** The window's default length: a quarter of an hour (15 buckets of the default width). */
export const DEFAULT_RATE_WINDOW_SECONDS = 900;
/** The window's longest length: a day (with rate_bucket_seconds of at least 1440). */
export const MAX_RATE_WINDOW_SECONDS = 86_400;
/** The default bucket width, in s. */
export const DEFAULT_RATE_BUCKET_SECONDS = 60;
/** The widest bucket, in s. */
export const MAX_RATE_BUCKET_SECONDS = 3_600;
/** Buckets a window may cover, at most: rate_window_seconds is at most this many bucket widths. */
export const MAX_RATE_WINDOW_BUCKETS = 60;

/** The longest window buckets of `bucketSeconds` allow. */
export const maxWindowSeconds = (bucketSeconds: number): number => Math.min(MAX_RATE_WINDOW_SECONDS, MAX_RATE_WINDOW_BUCKETS * bucketSeconds);

/** A window of `seconds` (an integer from 1 to a day, at most 60 buckets) in buckets of `bucketSeconds`. */
export function rateWindow(seconds = DEFAULT_RATE_WINDOW_SECONDS, now: () => number = Date.now, bucketSeconds = DEFAULT_RATE_BUCKET_SECONDS): RateWindow {
  checkInteger('rateBucketSeconds', bucketSeconds, { min: 1, max: MAX_RATE_BUCKET_SECONDS });
  checkInteger('rateWindowSeconds', seconds, { min: 1, max: maxWindowSeconds(bucketSeconds) });
  return { seconds, bucketMs: bucketSeconds * 1000, buckets: Math.ceil(seconds / bucketSeconds), now };
}

/** The number of the bucket `time` falls in. */
export const bucketOf = (window: RateWindow, time = window.now()): number => Math.floor(time / window.bucketMs);

/** One pair's counts per bucket: at most the window's buckets, older ones dropped as calls come. */
export class WindowCounts {
  private readonly byBucket = new Map<number, ToolCounters>();

  constructor(private readonly window: RateWindow) {}

  /** The counts of the current bucket, to add a call to; buckets past the window are dropped. */
  current(): ToolCounters {
    const bucket = bucketOf(this.window);
    let counters = this.byBucket.get(bucket);
    if (counters) return counters;
    for (const old of this.byBucket.keys()) if (old <= bucket - this.window.buckets) this.byBucket.delete(old);
    counters = emptyCounters();
    this.byBucket.set(bucket, counters);
    return counters;
  }

  /** The counts of the buckets the window covers now, summed into `into`. */
  sumInto(into: ToolCounters): ToolCounters {
    const oldest = bucketOf(this.window) - this.window.buckets + 1;
    for (const [bucket, counters] of this.byBucket) {
      if (bucket >= oldest) addCounters(into, counters);
    }
    return into;
  }
}
