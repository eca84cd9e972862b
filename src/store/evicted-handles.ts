/**
 * The result handles whose spills the memory store evicted for room (its spill budget), so that
 * ReadResult of one says so rather than "not found (it may have expired)": a handle issued seconds
 * before, pushed out by another session's large results, read as a mistake of the caller's or an
 * expiry, and its operator had no hint that a bound of the replica's was the cause. At most
 * `max` handles are remembered, the oldest evictions forgotten first, each only until its spill
 * would have expired anyway (then "it may have expired" is true).
 */
export interface EvictedHandles {
  /** Remembers `tenant`'s `handle` as evicted for room; its spill would have lived until `until` (epoch ms). */
  add(tenant: string, handle: string, until: number): void;
  /** Whether `tenant`'s `handle` was evicted for room and would still be live at `t`. */
  has(tenant: string, handle: string, t: number): boolean;
  /** Forgets `tenant`'s `handle` (written again). */
  forget(tenant: string, handle: string): void;
  /** Handles remembered now (at most the bound). */
  readonly size: number;
  clear(): void;
}

/** Handles a memory store remembers as evicted for room when its options name no bound (MemoryStoreOptions.maxEvictedHandles). */
export const DEFAULT_MAX_EVICTED_HANDLES = 10_000;

export function createEvictedHandles(max: number = DEFAULT_MAX_EVICTED_HANDLES): EvictedHandles {
  // Insertion order is eviction order: the first key is the oldest eviction.
  const evicted = new Map<string, number>();
  const key = (tenant: string, handle: string) => `${tenant}\u0000${handle}`;
  return {
    add(tenant, handle, until) {
      const k = key(tenant, handle);
      evicted.delete(k);
      evicted.set(k, until);
      while (evicted.size > max) evicted.delete(evicted.keys().next().value!);
    },
    has(tenant, handle, t) {
      const k = key(tenant, handle);
      const until = evicted.get(k);
      if (until === undefined) return false;
      if (until > t) return true;
      evicted.delete(k);
      return false;
    },
    forget(tenant, handle) {
      if (evicted.size > 0) evicted.delete(key(tenant, handle));
    },
    get size() {
      return evicted.size;
    },
    clear() {
      evicted.clear();
    },
  };
}
