import { createLeased } from './live-claims';

/**
 * The loop-block probes this replica's attempts took, by holder (LoopBlock.holder, unique per
 * attempt): when each one's lease ends at the latest. A give-back of such a probe that fails (its
 * finish step: Redis cut off, or refusing writes for a moment) waits among the pending writes
 * until then and no longer: past its lease Redis has freed the probe already.
 */
export interface TakenProbes {
  /** Remembers the probe `holder` took with a step sent at `sentAt` (epoch ms), held `leaseMs`. */
  add(holder: string, sentAt: number, leaseMs: number): void;
  /** When `holder`'s probe is free anyway (epoch ms), forgotten; undefined when not known or ended. */
  take(holder: string): number | undefined;
}

/**
 * Keeps at most `max` probes, each until its lease ends; past `max`, the oldest is forgotten (its
 * give-back, if it fails, is not retried: the lease frees it). The lease is counted from before
 * the step was sent, so never past the lease Redis counts from the script's run.
 */
export function createTakenProbes(max: number, now: () => number = Date.now): TakenProbes {
  const probes = createLeased<true>(max, now);
  return {
    add: (holder, sentAt, leaseMs) => probes.add(holder, true, leaseMs, sentAt),
    take: (holder) => probes.take(holder)?.until,
  };
}
