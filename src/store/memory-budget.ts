import { evictOldest, TRIM_TO } from './evict-oldest';

/** A trajectory-memory entry as the memory store keeps it. */
export interface MemoryEntry {
  readonly value: string;
  readonly expiresAt: number;
}

/**
 * Bounds the characters of trajectory-memory entries the memory store holds across all sessions
 * (each session keeps up to its max_memory_entries, for their TTL of a day by default): past the
 * budget the oldest entries go, whichever session holds them, until a tenth below it, so the cost
 * per entry stays flat. Entries of a session evicted for room stay counted (and held) until they
 * are the oldest, so the budget errs on the safe side. An entry larger than the budget is kept alone.
 */
export interface MemoryBudget {
  /** Counts `entry`, just pushed onto its session's `holder`, evicting the oldest while over the budget. */
  add(holder: MemoryEntry[], entry: MemoryEntry): void;
  /** Uncounts `entry`, which left its session (its per-session cap, the session's end). */
  drop(entry: MemoryEntry): void;
  clear(): void;
  /** Characters counted now. */
  readonly chars: number;
}

export function createMemoryBudget(maxChars: number): MemoryBudget {
  // Oldest first: an entry and the session's list that holds it.
  const entries = new Map<MemoryEntry, MemoryEntry[]>();
  let total = 0;
  const drop = (entry: MemoryEntry): void => {
    if (entries.delete(entry)) total -= entry.value.length;
  };
  const evict = (entry: MemoryEntry): void => {
    const holder = entries.get(entry)!;
    drop(entry);
    // A session's entries are in the order they were counted: the oldest counted is its first.
    if (holder[0] === entry) holder.shift();
    else {
      const at = holder.indexOf(entry);
      if (at >= 0) holder.splice(at, 1);
    }
  };
  return {
    add(holder, entry) {
      entries.set(entry, holder);
      total += entry.value.length;
      if (total <= maxChars) return;
      const target = maxChars * TRIM_TO;
      evictOldest(entries, () => total > target && entries.size > 1, evict);
    },
    drop,
    clear() {
      entries.clear();
      total = 0;
    },
    get chars() {
      return total;
    },
  };
}
