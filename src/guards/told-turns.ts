import { trimLimits } from './trim-limits';

/** Rate keys whose last time told is kept; past it, room is made fairly between tenants (trim-limits.ts). */
const MAX_TOLD_KEYS = 10_000;
/**
 * How far ahead calls refused one after another are told at most (unless their limit's next turn
 * itself is further): a flood of refusals would otherwise tell times past retry_after_ms's uint32
 * (49 days), and an hour is as far as a tool's Retry-After is passed on (MAX_RETRY_AFTER_MS).
 */
export const MAX_TOLD_AHEAD_MS = 3_600_000;

/**
 * When refused calls were told to come back, per rate key (each replica's own limits; take-turn.lua
 * keeps the same for shared ones). A refusal reserves no turn, so without this every call refused
 * in the same moment (a parallel turn) would be told the same next turn, and all but one of those
 * that follow it would be refused again. Each refusal is told one interval after the last time
 * told that has not come yet, or the limit's next turn if that is later: the k-th call refused
 * before the next turn comes is told that turn plus (k - 1) intervals. Only the last time told is
 * kept per key, and only while it is ahead. Past MAX_TOLD_AHEAD_MS from now, every call refused
 * is told that.
 */
export interface ToldTurns {
  /** The time (ms, the caller's clock) to tell a call refused at `now` whose limit's next turn is at `nextAt`; remembered. */
  tell(key: string, now: number, nextAt: number, intervalMs: number): number;
}

export function createToldTurns(): ToldTurns {
  const lastTold = new Map<string, number>();
  return {
    tell(key, now, nextAt, intervalMs) {
      const last = lastTold.get(key);
      const at = last !== undefined && last > now ? Math.max(nextAt, Math.min(last + intervalMs, now + MAX_TOLD_AHEAD_MS)) : nextAt;
      // The times already come go first, then those of the tenants past an equal share, soonest
      // first. Before, when all were still ahead, all went: one tenant's refusals over 10,000 tools
      // had every other tenant's next refused call told the turn an earlier one was told.
      if (last === undefined && lastTold.size >= MAX_TOLD_KEYS) trimLimits(lastTold, now, MAX_TOLD_KEYS);
      lastTold.set(key, at);
      return at;
    },
  };
}
