/** Successes and failures over a sliding time window, at a fixed cost per record. */
export interface RollingCounts {
  add(ok: boolean): void;
  /** The totals of the window as of now. */
  totals(): { readonly ok: number; readonly failed: number };
  reset(): void;
}

/**
 * A window of `windowMs` kept in `buckets` slots of preallocated counters: a record touches one
 * slot and slides the window lazily, so it never allocates and costs the same at any load.
 */
export function createRollingCounts(windowMs: number, buckets: number, now: () => number): RollingCounts {
  const bucketMs = Math.max(1, Math.floor(windowMs / buckets));
  const ok = new Uint32Array(buckets);
  const failed = new Uint32Array(buckets);
  let head = 0;
  let headStart = now();
  let okSum = 0;
  let failedSum = 0;

  const clearAll = () => {
    ok.fill(0);
    failed.fill(0);
    okSum = 0;
    failedSum = 0;
  };
  const slide = () => {
    const t = now();
    const steps = Math.floor((t - headStart) / bucketMs);
    if (steps <= 0) return;
    if (steps >= buckets) clearAll();
    else {
      for (let i = 0; i < steps; i++) {
        head = (head + 1) % buckets;
        okSum -= ok[head]!;
        failedSum -= failed[head]!;
        ok[head] = 0;
        failed[head] = 0;
      }
    }
    headStart += steps * bucketMs;
  };

  return {
    add(success) {
      slide();
      if (success) {
        ok[head] += 1;
        okSum++;
      } else {
        failed[head] += 1;
        failedSum++;
      }
    },
    totals() {
      slide();
      return { ok: okSum, failed: failedSum };
    },
    reset() {
      clearAll();
      headStart = now();
    },
  };
}
