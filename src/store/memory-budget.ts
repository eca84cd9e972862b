import { TenantShares, type SharedEntry } from './tenant-shares';

/**
 * A trajectory-memory entry as the memory store keeps it, with what the budget counts it by: its
 * tenant, its characters and the session's list that holds it. The budget counts the entry itself
 * (a wrapper and a map to it took ~140 more bytes an entry: ~190 against ~50 for ~50 characters).
 */
export interface MemoryEntry extends SharedEntry {
  readonly value: string;
  readonly holder: MemoryEntry[];
}

/** `tenant`'s entry of `value` until `expiresAt`, for its session's `holder` (all its fields at once: one shape). */
export function memoryEntry(tenant: string, holder: MemoryEntry[], value: string, expiresAt: number): MemoryEntry {
  return { value, expiresAt, tenant, chars: value.length, holder };
}

/**
 * Bounds the characters of trajectory-memory entries the memory store holds across all sessions
 * (each session keeps up to its max_memory_entries, for their TTL of a day by default). Past the
 * budget, until a tenth below it (so the cost per entry stays flat), the expired entries go first,
 * then the oldest entries of the tenants holding more than an equal share of the characters, down
 * to it (TenantShares, as for spilled results): so one tenant's flood of memory writes evicts its
 * own oldest entries, never those of a tenant within its share. Entries of a session evicted for
 * room stay counted (and held) until they expire or are their tenant's oldest: unlike spills they
 * are not looked for at every pass, which with ~50-character entries took ~150 ms (a look at each
 * of ~300,000 entries). An entry larger than the budget is kept alone.
 */
export interface MemoryBudget {
  /** Counts `entry`, just pushed onto its session's `holder`, evicting while over the budget at `t`. */
  add(entry: MemoryEntry, t: number): void;
  /** Uncounts `entry`, which left its session (its per-session cap, the session's end). */
  drop(entry: MemoryEntry): void;
  clear(): void;
  /** Characters counted now. */
  readonly chars: number;
}

export function createMemoryBudget(maxChars: number): MemoryBudget {
  const shares = new TenantShares<MemoryEntry>({ maxEntries: Infinity, maxChars });
  const drop = (entry: MemoryEntry): void => {
    shares.delete(entry);
  };
  const evict = (entry: MemoryEntry): void => {
    const { holder } = entry;
    drop(entry);
    // A session's entries are in the order they were counted: the oldest counted is its first.
    if (holder[0] === entry) holder.shift();
    else {
      const at = holder.indexOf(entry);
      if (at >= 0) holder.splice(at, 1);
    }
  };
  return {
    add(entry, t) {
      shares.add(entry);
      // The entry just added stays even alone past the budget.
      if (shares.over) shares.trim(entry, t, evict);
    },
    drop,
    clear() {
      shares.clear();
    },
    get chars() {
      return shares.chars;
    },
  };
}
