import { evictOldest } from './evict-oldest';

/** Where a spilled text is kept: its session's map of results, by handle. */
type Holder = Map<string, unknown>;

/**
 * Bounds the characters of spilled results the memory store holds across all sessions (each may
 * be up to 16 Mi characters, kept an hour by default): past the budget the oldest spills go, as
 * Redis's maxmemory would evict them. Spills gone otherwise (their session evicted or ended, the
 * per-session cap) stay counted until they are the oldest, so the budget errs on the safe side.
 */
export interface SpillBudget {
  /** Counts `chars` for `handle` in `holder`, evicting the oldest spills while over the budget. */
  add(holder: Holder, handle: string, value: unknown, chars: number): void;
  /** Characters counted now. */
  readonly chars: number;
}

export function createSpillBudget(maxChars: number): SpillBudget {
  const spills = new Map<string, { holder: Holder; value: unknown; chars: number }>();
  let total = 0;
  const evict = (handle: string) => {
    const spill = spills.get(handle)!;
    spills.delete(handle);
    total -= spill.chars;
    // Only the very spill counted: the handle may have been written again since.
    if (spill.holder.get(handle) === spill.value) spill.holder.delete(handle);
  };
  return {
    add(holder, handle, value, chars) {
      if (spills.has(handle)) evict(handle);
      spills.set(handle, { holder, value, chars });
      total += chars;
      // The spill just added stays even alone past the budget: a result is never lost at once.
      evictOldest(spills, () => total > maxChars && spills.size > 1, evict);
    },
    get chars() {
      return total;
    },
  };
}
