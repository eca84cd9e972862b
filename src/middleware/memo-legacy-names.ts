// Rolling-upgrade compatibility of hashed memo resource names. Before commit 01b27b4 ("Memo cache:
// long (hashed) resource keys are marked in their own tenant's bucket") a long resource_key value
// was named by its hash alone; since, by tenant, NUL, '#' and that same hash. Replicas announce
// the names they write (SessionEnds.announceWrite), so while old and new replicas share a Redis
// each would miss the other's writes of a long key and serve a read cached before it until its
// TTL. New replicas therefore announce both names (memoize) and map an old one heard back to the
// new one (this index, in the memo cache).
// Remove this module, its uses in memo-cache.ts and the second announcement in memoize.ts once no
// replica older than 01b27b4 shares a Redis with a newer one (the release after the one that
// carries this: every replica of a rolling upgrade from it announces the new names).

/** The name a replica older than 01b27b4 gave a hashed resource (its hash alone), or undefined for a name kept as it is. */
export function legacyResourceName(resource: string): string | undefined {
  const nul = resource.indexOf('\u0000');
  return nul >= 0 && resource.charCodeAt(nul + 1) === 0x23 /* '#' */ ? resource.slice(nul + 2) : undefined;
}

/**
 * The hashed resources this replica has read, by their old name: up to `max`, the first noted
 * dropped first. A name dropped is `forget`-ed (its entries evicted and its generation bumped, as a
 * write would), so that an old replica's write of it, heard once it is no longer known, finds
 * nothing cached or running here to leave stale: a miss, never a stale read.
 */
export class LegacyResourceNames {
  /** Old name (the hash) to the name this version gives it. */
  private readonly names = new Map<string, string>();

  constructor(
    private readonly max: number,
    private readonly forget: (resource: string) => void,
  ) {}

  /**
   * Notes a resource a read is about to read (one Map set for a hashed name, none for another).
   * A name noted again keeps its place: refreshing it would cost a delete too on every read.
   */
  note(resource: string): void {
    const legacy = legacyResourceName(resource);
    if (legacy === undefined) return;
    this.names.set(legacy, resource);
    if (this.names.size <= this.max) return;
    const [oldest, name] = this.names.entries().next().value as [string, string];
    this.names.delete(oldest);
    this.forget(name);
  }

  /** The name this version gives `resource` if it is an old name of one noted here, else `resource` itself. */
  current(resource: string): string {
    return resource.includes('\u0000') ? resource : (this.names.get(resource) ?? resource);
  }

  clear(): void {
    this.names.clear();
  }
}
