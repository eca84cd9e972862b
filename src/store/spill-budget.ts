import { TenantShares } from './tenant-shares';

/** A spilled text as its session keeps it: until it expires. */
interface Held {
  readonly expiresAt: number;
}

/** Where a spilled text is kept: its session's map of results, by handle. */
type Holder = Map<string, Held>;

interface Spill {
  readonly tenant: string;
  readonly holder: Holder;
  readonly handle: string;
  readonly value: Held;
  readonly chars: number;
  readonly expiresAt: number;
  /** Whether its session is still kept (false once evicted for room). */
  readonly kept: () => boolean;
}

/**
 * Bounds the characters of spilled results the memory store holds across all sessions (each may
 * be up to 16 Mi characters, kept an hour by default). Past the budget, until a tenth below it,
 * the expired spills go first, then the oldest spills of the tenants holding more than an equal
 * share of the characters, down to it (TenantShares): so one tenant's spills never evict those of
 * a tenant within its share. A spill that leaves its session (the per-session cap, the handle
 * written again, the session's end) is uncounted then ({@link SpillBudget.drop},
 * {@link SpillBudget.forget}); one whose session was evicted for room, at the next trim (which
 * looks for such spills every time): so a session gone does not keep its tenant's share, and
 * another tenant's live spills are not evicted in its place.
 */
export interface SpillBudget {
  /**
   * Counts `chars` for `tenant`'s spill `value` at `handle` in `holder` (uncounting the spill it
   * replaces there), evicting while over the budget at `t`; `kept` tells whether its session still is.
   */
  add(tenant: string, holder: Holder, handle: string, value: Held, chars: number, t: number, kept?: () => boolean): void;
  /** Uncounts the spill at `handle` in `holder`, which left it (the per-session cap); none counted: nothing. */
  drop(holder: Holder, handle: string): void;
  /** Uncounts every spill in `holder`, whose session ended. */
  forget(holder: Holder): void;
  /** Characters counted now. */
  readonly chars: number;
}

/**
 * `onEvicted` hears of each spill evicted for room (live, its session kept: not expired nor gone),
 * with the time it would have expired: ReadResult of its handle then says why it is gone.
 */
export function createSpillBudget(maxChars: number, onEvicted?: (tenant: string, handle: string, until: number) => void): SpillBudget {
  const spills = new TenantShares<Spill>({ maxEntries: Infinity, maxChars });
  // The spills counted, by holder and handle: a spill is uncounted once (TenantShares.delete says whether it was).
  const byHolder = new WeakMap<Holder, Map<string, Spill>>();
  const uncount = (spill: Spill): void => {
    spills.delete(spill);
    const counted = byHolder.get(spill.holder);
    if (counted?.get(spill.handle) === spill) counted.delete(spill.handle);
  };
  const gone = (s: Spill): boolean => s.holder.get(s.handle) !== s.value || !s.kept();
  const evict = (spill: Spill, t: number): void => {
    // Told before it goes: one still live and held goes for room, not for its TTL nor its session.
    const forRoom = onEvicted !== undefined && spill.expiresAt > t && !gone(spill);
    uncount(spill);
    // Only the very spill counted: the handle may have been written again since.
    if (spill.holder.get(spill.handle) === spill.value) spill.holder.delete(spill.handle);
    if (forRoom) onEvicted(spill.tenant, spill.handle, spill.expiresAt);
  };
  return {
    add(tenant, holder, handle, value, chars, t, kept = () => true) {
      let counted = byHolder.get(holder);
      if (!counted) byHolder.set(holder, (counted = new Map()));
      const replaced = counted.get(handle);
      if (replaced) uncount(replaced);
      const spill: Spill = { tenant, holder, handle, value, chars, expiresAt: value.expiresAt, kept };
      spills.add(spill);
      counted.set(handle, spill);
      // The spill just added stays even alone past the budget: a result is never lost at once.
      if (spills.over) spills.trim(spill, t, (s) => evict(s, t), gone);
    },
    drop(holder, handle) {
      const spill = byHolder.get(holder)?.get(handle);
      if (spill) uncount(spill);
    },
    forget(holder) {
      const counted = byHolder.get(holder);
      if (!counted) return;
      byHolder.delete(holder);
      for (const spill of counted.values()) spills.delete(spill);
    },
    get chars() {
      return spills.chars;
    },
  };
}
