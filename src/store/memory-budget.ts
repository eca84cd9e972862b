import { TenantShares } from './tenant-shares';

/** A trajectory-memory entry as the memory store keeps it. */
export interface MemoryEntry {
  readonly value: string;
  readonly expiresAt: number;
}

/** An entry as the budget counts it: its tenant, and the session's list that holds it. */
interface Counted {
  readonly tenant: string;
  readonly entry: MemoryEntry;
  readonly holder: MemoryEntry[];
  readonly chars: number;
  readonly expiresAt: number;
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
  /** Counts `tenant`'s `entry`, just pushed onto its session's `holder`, evicting while over the budget at `t`. */
  add(tenant: string, holder: MemoryEntry[], entry: MemoryEntry, t: number): void;
  /** Uncounts `entry`, which left its session (its per-session cap, the session's end). */
  drop(entry: MemoryEntry): void;
  clear(): void;
  /** Characters counted now. */
  readonly chars: number;
}

export function createMemoryBudget(maxChars: number): MemoryBudget {
  const shares = new TenantShares<Counted>({ maxEntries: Infinity, maxChars });
  const counted = new Map<MemoryEntry, Counted>();
  const drop = (entry: MemoryEntry): void => {
    const of = counted.get(entry);
    if (!of) return;
    counted.delete(entry);
    shares.delete(of);
  };
  const evict = ({ entry, holder }: Counted): void => {
    drop(entry);
    // A session's entries are in the order they were counted: the oldest counted is its first.
    if (holder[0] === entry) holder.shift();
    else {
      const at = holder.indexOf(entry);
      if (at >= 0) holder.splice(at, 1);
    }
  };
  return {
    add(tenant, holder, entry, t) {
      const of: Counted = { tenant, entry, holder, chars: entry.value.length, expiresAt: entry.expiresAt };
      counted.set(entry, of);
      shares.add(of);
      // The entry just added stays even alone past the budget.
      if (shares.over) shares.trim(of, t, evict);
    },
    drop,
    clear() {
      counted.clear();
      shares.clear();
    },
    get chars() {
      return shares.chars;
    },
  };
}
