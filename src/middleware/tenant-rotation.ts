/**
 * Items waiting per tenant, taken tenants in turn (round-robin): each take serves the tenant whose
 * turn it is, its oldest item, then that tenant goes to the back of the line. One tenant's many
 * items wait behind each other, never in front of another tenant's first.
 */
export interface TenantRotation<T> {
  /** Adds `item` at the end of `tenant`'s own line. */
  push(tenant: string, item: T): void;
  /** Removes `item` from `tenant`'s line; false when it was not there (taken already). */
  remove(tenant: string, item: T): boolean;
  /** The next item in turn, or undefined when none waits. */
  take(): T | undefined;
  /** Items waiting, every tenant's. */
  readonly size: number;
}

/** Creates an empty {@link TenantRotation}. */
export function createTenantRotation<T>(): TenantRotation<T> {
  // A Map keeps its keys in insertion order: its first tenant is the one whose turn it is, and a
  // tenant served is deleted and set again, to the back. A Set per tenant removes an item at once.
  const lines = new Map<string, Set<T>>();
  let size = 0;
  return {
    push(tenant, item) {
      const line = lines.get(tenant);
      if (line) line.add(item);
      else lines.set(tenant, new Set([item]));
      size++;
    },
    remove(tenant, item) {
      const line = lines.get(tenant);
      if (!line?.delete(item)) return false;
      if (line.size === 0) lines.delete(tenant);
      size--;
      return true;
    },
    take() {
      const first = lines.entries().next();
      if (first.done) return undefined;
      const [tenant, line] = first.value;
      const item = line.values().next().value as T;
      line.delete(item);
      lines.delete(tenant);
      if (line.size > 0) lines.set(tenant, line);
      size--;
      return item;
    },
    get size() {
      return size;
    },
  };
}
