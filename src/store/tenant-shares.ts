import { TRIM_TO } from './evict-oldest';
import { waterLevel } from './water-level';

/** What one tenant holds: its entries oldest first, and their characters. */
interface Share<E> {
  readonly entries: Set<E>;
  chars: number;
}

/** What a {@link TenantShares} needs of an entry: its tenant, size and expiry. */
export interface SharedEntry {
  readonly tenant: string;
  /** Characters it counts against the bound. */
  readonly chars: number;
  /** When it expires: it is dead then, and goes first whenever room is needed. */
  readonly expiresAt: number;
}

/** The store-wide bounds of a {@link TenantShares}: entries and characters. */
export interface ShareBounds {
  readonly maxEntries: number;
  readonly maxChars: number;
}

/**
 * Counts what the memory store holds against a store-wide bound (entries and characters) per
 * tenant, so that room is made fairly: past either bound, {@link trim} takes everything down to a
 * tenth below it (so that a pass, O(entries + tenants log tenants) at most, is rare and the cost
 * per entry or character added flat). First the dead entries go (expired, or no longer held),
 * whoever holds them, when one can have expired since the last look; then the oldest of the
 * tenants holding more than an equal share, down to it (water-filling, as LiveSessions does for
 * sessions: a tenant holding less than an equal share keeps all it holds, and the room it leaves
 * is shared by the others). So one tenant's flood evicts its own oldest entries, never those of a
 * tenant within its share. The totals are kept as entries come and go: adding and deleting are O(1).
 */
export class TenantShares<E extends SharedEntry> {
  private readonly tenants = new Map<string, Share<E>>();
  private count = 0;
  private total = 0;
  /** No entry can have expired before this time, so a look for dead ones before it would find none. */
  private nextDeathAt = Infinity;
  private readonly keepEntries: number;
  private readonly keepChars: number;

  constructor(private readonly bounds: ShareBounds) {
    this.keepEntries = Math.floor(bounds.maxEntries * TRIM_TO);
    this.keepChars = Math.floor(bounds.maxChars * TRIM_TO);
  }

  /** Entries counted now. */
  get entries(): number {
    return this.count;
  }

  /** Characters counted now. */
  get chars(): number {
    return this.total;
  }

  /** Whether either bound is passed: {@link trim} is due. */
  get over(): boolean {
    return this.count > this.bounds.maxEntries || this.total > this.bounds.maxChars;
  }

  /** Counts `entry` (not counted yet) as its tenant's newest. */
  add(entry: E): void {
    let share = this.tenants.get(entry.tenant);
    if (!share) this.tenants.set(entry.tenant, (share = { entries: new Set(), chars: 0 }));
    share.entries.add(entry);
    share.chars += entry.chars;
    this.count++;
    this.total += entry.chars;
    if (entry.expiresAt < this.nextDeathAt) this.nextDeathAt = entry.expiresAt;
  }

  /** Uncounts `entry`; false when it was not counted. */
  delete(entry: E): boolean {
    const share = this.tenants.get(entry.tenant);
    if (!share?.entries.delete(entry)) return false;
    share.chars -= entry.chars;
    this.count--;
    this.total -= entry.chars;
    if (share.entries.size === 0) this.tenants.delete(entry.tenant);
    return true;
  }

  clear(): void {
    this.tenants.clear();
    this.count = 0;
    this.total = 0;
    this.nextDeathAt = Infinity;
  }

  /**
   * Evicts until a tenth below both bounds at `t` (see the class): the dead entries (expired, or
   * `gone`), then the oldest of the tenants over an equal share. `evict` must uncount the entry
   * ({@link delete}). `current`, the entry just added, stays even alone past a bound: a result is
   * never lost at once. Given `gone`, the dead are looked for in every trim (a trim takes the
   * total to a tenth below the bound, so that is at most one pass per tenth added): an entry can
   * be gone at any time, not only once one has expired.
   */
  trim(current: E, t: number, evict: (entry: E) => void, gone?: (entry: E) => boolean): void {
    if (gone || t >= this.nextDeathAt) this.evictDead(current, t, evict, gone ?? (() => false));
    if (this.count <= this.keepEntries && this.total <= this.keepChars) return;
    const shares = [...this.tenants.values()];
    const entryLevel = waterLevel(shares.map((share) => share.entries.size), this.keepEntries);
    const charLevel = waterLevel(shares.map((share) => share.chars), this.keepChars);
    for (const share of shares) {
      // One iterator per tenant: evicting from the front with a new one each time is O(n) an entry (evict-oldest.ts).
      for (const entry of share.entries) {
        if (share.entries.size <= entryLevel && share.chars <= charLevel) break;
        if (entry !== current) evict(entry);
      }
    }
  }

  private evictDead(current: E, t: number, evict: (entry: E) => void, gone: (entry: E) => boolean): void {
    let next = Infinity;
    for (const share of this.tenants.values()) {
      for (const entry of share.entries) {
        if (entry !== current && (entry.expiresAt <= t || gone(entry))) evict(entry);
        else if (entry.expiresAt < next) next = entry.expiresAt;
      }
    }
    this.nextDeathAt = next;
  }
}
