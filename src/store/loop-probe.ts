import type { LoopBlock, LoopStreak } from './store';

// The probe of a loop block (DESIGN section 6) in the memory store: after the cool-down one call
// runs once more, and only one, until it reports a newer failure, gives the probe back unused
// (FinishAttempt.unusedProbe) or its lease ends. The Redis store does the same in
// begin-attempt.lua and finish-attempt.lua.

/** A probe handed out: to the call `holder` whose streak's newest counted failure was recorded `at`, until `until`. */
interface ProbeClaim {
  readonly at: number;
  readonly until: number;
  readonly holder: string;
}

/** Claims kept per session before those that ended are swept. */
const SWEEP_PAST = 32;

/**
 * Whether `streak` is blocked by `block` and its cool-down is over (no wait it told left): its
 * next call is the probe. Exactly when blockLeftMs (pipeline/loop-block.ts) gives 0. A streak of
 * refusals (LoopStreak.refused) blocks nothing.
 */
export function probeDue(streak: LoopStreak, block: LoopBlock): boolean {
  return streak.failed && streak.refused !== true && streak.count >= block.threshold && (streak.sinceMs ?? Infinity) >= block.cooldownMs && (streak.waitMs ?? 0) === 0;
}

/**
 * The probes handed out in one session, by op. A claim holds for the streak it was taken on: once
 * a newer failure is recorded (the probe reported, and failed again) the next cool-down's probe is
 * free again, whatever is left of the lease.
 */
export class ProbeClaims {
  private readonly claims = new Map<string, ProbeClaim>();

  /**
   * The probe step of beginAttempt at `t` for `op`'s `streak`: nothing when no probe is due,
   * `probeHeldMs` when another call holds it, else claims it (when `take`) for `block.leaseMs`.
   * `take` false only reads: the call will not run (its record answers it, or its budget is spent).
   */
  step(op: string, streak: LoopStreak, block: LoopBlock, t: number, take: boolean): { probeClaimed?: true; probeHeldMs?: number } {
    if (!probeDue(streak, block)) return {};
    const at = t - streak.sinceMs!;
    const held = this.claims.get(op);
    if (held && held.at === at && held.until > t) return { probeHeldMs: held.until - t };
    if (!take || block.peek) return {};
    if (this.claims.size >= SWEEP_PAST) for (const [key, claim] of this.claims) if (claim.until <= t) this.claims.delete(key);
    this.claims.set(op, { at, until: t + block.leaseMs, holder: block.holder ?? '' });
    return { probeClaimed: true };
  }

  /** Frees `op`'s probe if `holder` (not empty) still holds it: its call did not use it (FinishAttempt.unusedProbe). */
  free(op: string, holder: string): void {
    if (holder !== '' && this.claims.get(op)?.holder === holder) this.claims.delete(op);
  }
}
