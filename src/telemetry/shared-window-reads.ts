/**
 * One Redis read of a tenant's counts (per tool asked, '' for all) shared by every GetToolStats
 * that asks while it is out (single flight, as shared-rendering.ts does for scrapes) and served
 * again for `keepMs` after it ends; `invalidate` lets a tenant's reads go at once (this replica's
 * flush of it landed, or a tool was removed), so a replica always sees its own calls; a failed
 * flush lets them all go. A read that fails is not kept.
 */
export interface SharedWindowReads<T> {
  get(tenant: string, tool: string): Promise<T>;
  invalidate(tenant: string): void;
  /** Lets every read go (a flush failed: Redis may be away, and a read should find out). */
  clear(): void;
}

export function sharedWindowReads<T>(read: (tenant: string, tool: string) => Promise<T>, keepMs: number): SharedWindowReads<T> {
  const byTenant = new Map<string, Map<string, Promise<T>>>();
  const drop = (tenant: string, tool: string, entry: Promise<T>) => {
    const reads = byTenant.get(tenant);
    if (reads?.get(tool) !== entry) return;
    reads.delete(tool);
    if (reads.size === 0) byTenant.delete(tenant);
  };
  return {
    get(tenant, tool) {
      let reads = byTenant.get(tenant);
      const kept = reads?.get(tool);
      if (kept) return kept;
      const entry: Promise<T> = read(tenant, tool);
      if (!reads) byTenant.set(tenant, (reads = new Map()));
      reads.set(tool, entry);
      entry.then(
        () => (keepMs > 0 ? void setTimeout(() => drop(tenant, tool, entry), keepMs).unref() : drop(tenant, tool, entry)),
        () => drop(tenant, tool, entry),
      );
      return entry;
    },
    invalidate(tenant) {
      byTenant.delete(tenant);
    },
    clear() {
      byTenant.clear();
    },
  };
}
