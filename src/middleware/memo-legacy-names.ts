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

import { MemoMarks, resourceGroup } from './memo-marks';

/** The name a replica older than 01b27b4 gave a hashed resource (its hash alone), or undefined for a name kept as it is. */
export function legacyResourceName(resource: string): string | undefined {
  const nul = resource.indexOf('\u0000');
  return nul >= 0 && resource.charCodeAt(nul + 1) === 0x23 /* '#' */ ? resource.slice(nul + 2) : undefined;
}

/**
 * The hashed resources this replica has read, by their old name: up to `max` in all, an equal share
 * per tenant (the part of the name before its NUL), kept by {@link MemoMarks} (water-filling over
 * groups, as the memo cache bounds its generations and session ends): past `max`, a pass cuts the
 * tenants holding more than an equal share to it, their least recently used first (a name read or
 * written again is marked again, the newest of its tenant: a tenant's flood of distinct long keys
 * pushes out its cold names, not its hot one), so one tenant's flood of long-key reads pushes out
 * only its own names, never those of a tenant within its share (with more tenants than names, the
 * least recently active go whole). A name pushed out is `forget`-ed (its entries evicted and its
 * generation bumped, as a write would) as it goes.
 *
 * That keeps this invariant, on which {@link current} relies to do nothing for an old name it does
 * not hold: every hashed resource with an entry cached here, or a read running that may still be
 * cached, is held. A read notes its resource when it reads its generation (memo-cache.ts reads the
 * generation first, so that one pushed out by its own noting is bumped after); until it is cached
 * its name can go only through `forget`, which bumps the generation it read, so that it is not
 * cached (and a peeked hit of it no longer serves); an entry's name goes only through `forget` too,
 * which evicts it. So an old-format write heard for a name not held finds nothing cached or running
 * here to leave stale: doing nothing is a miss at worst, never a stale read. The cache's clear keeps
 * the names, as a read running across it may still be cached.
 *
 * A name with no NUL (never this version's: a caller's own bare name) is held as itself, in the
 * group '', so that such a read is dropped by a write heard of it too.
 */
export class LegacyResourceNames {
  /** Old name (the hash) to the name this version gives it. */
  private readonly names = new Map<string, string>();
  /** The names held, per tenant: marks made only to bound them (the marks themselves are not read). */
  private readonly held: MemoMarks;

  constructor(max: number, forget: (resource: string) => void) {
    this.held = new MemoMarks(max, (_group, resource) => {
      this.names.delete(oldName(resource));
      forget(resource);
    });
  }

  /**
   * Notes a resource a read is about to read (none for a short name). A name noted again becomes
   * the most recently used of its tenant's (a delete and a set, O(1)), and its tenant the most
   * recently active, the last to go whole.
   */
  note(resource: string): void {
    const nul = resource.indexOf('\u0000');
    if (nul < 0) return this.hold('', resource, resource);
    const legacy = legacyResourceName(resource);
    if (legacy !== undefined) this.hold(resource.slice(0, nul), legacy, resource);
  }

  private hold(group: string, legacy: string, resource: string): void {
    // Held: marked again, it moves to the newest of its tenant (least recently used goes first).
    if (this.names.has(legacy)) return void this.held.mark(group, resource);
    // Set first: the marks may push out this very name (a bound of one), and `forgot` deletes it.
    this.names.set(legacy, resource);
    this.held.mark(group, resource);
  }

  /**
   * The name this version gives `resource`: itself if it is one of this version's (it has a NUL),
   * else (an old name) the name held for it, or undefined when none is held: then no read of it
   * runs or is cached here (see the class), and a write heard of it needs no mark. A write heard of
   * a name held, under either name, uses it: it becomes the most recently used of its tenant's.
   */
  current(resource: string): string | undefined {
    const nul = resource.indexOf('\u0000');
    if (nul >= 0) {
      const legacy = legacyResourceName(resource);
      if (legacy !== undefined && this.names.get(legacy) === resource) this.held.mark(resource.slice(0, nul), resource);
      return resource;
    }
    const name = this.names.get(resource);
    if (name !== undefined) this.held.mark(resourceGroup(name), name);
    return name;
  }
}

/** The name `resource` is held by: its old name, or itself for a name with no NUL. */
const oldName = (resource: string): string => legacyResourceName(resource) ?? resource;
