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
}

/**
 * Bounds the characters of spilled results the memory store holds across all sessions (each may
 * be up to 16 Mi characters, kept an hour by default). Past the budget, until a tenth below it,
 * the expired spills go first, then the oldest spills of the tenants holding more than an equal
 * share of the characters, down to it (TenantShares): so one tenant's spills never evict those of
 * a tenant within its share. Spills gone otherwise (their session evicted or ended, the
 * per-session cap) stay counted against their tenant's share until a pass finds them (one that
 * looks for expired spills, or cuts that share), so the budget errs on the safe side.
 */
export interface SpillBudget {
  /** Counts `chars` for `tenant`'s spill `value` at `handle` in `holder`, evicting while over the budget at `t`. */
  add(tenant: string, holder: Holder, handle: string, value: Held, chars: number, t: number): void;
  /** Characters counted now. */
  readonly chars: number;
}

export function createSpillBudget(maxChars: number): SpillBudget {
  const spills = new TenantShares<Spill>({ maxEntries: Infinity, maxChars });
  const evict = (spill: Spill): void => {
    spills.delete(spill);
    // Only the very spill counted: the handle may have been written again since.
    if (spill.holder.get(spill.handle) === spill.value) spill.holder.delete(spill.handle);
  };
  return {
    add(tenant, holder, handle, value, chars, t) {
      const spill: Spill = { tenant, holder, handle, value, chars, expiresAt: value.expiresAt };
      spills.add(spill);
      // The spill just added stays even alone past the budget: a result is never lost at once.
      if (spills.over) spills.trim(spill, t, evict, (s) => s.holder.get(s.handle) !== s.value);
    },
    get chars() {
      return spills.chars;
    },
  };
}
