import { TRIM_TO } from './evict-oldest';
import { waterLevel } from './water-level';

/** What one tenant holds: its entries oldest first, and their characters. */
interface Share<E> {
  readonly entries: Set<E>;
  chars: number;
  /** None of its entries can have expired before this time: a look for dead ones skips it until then. */
  nextDeathAt: number;
  /** The expiry of the entry added last, and whether each added expires no sooner than the one before. */
  lastExpiresAt: number;
  /** Then its dead entries come first (one TTL per tenant, the usual case): a look for them stops at the first live one. */
  inExpiryOrder: boolean;
}

/** Where the look for dead entries of a pass under way stands: it goes on in the pass's next call. */
interface DeadScan<E> {
  readonly shares: Iterator<Share<E>>;
  share?: Share<E>;
  entries?: Iterator<E>;
  /** The earliest expiry of the entries of `share` kept so far. */
  shareNext: number;
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

/** Entries a {@link TenantShares.trim} evicts at most once within both bounds (~1-2 ms of a store's evictions). */
export const TRIM_CHUNK = 2048;

/**
 * Counts what the memory store holds against a store-wide bound (entries and characters) per
 * tenant, so that room is made fairly: past either bound, {@link trim} takes everything down to a
 * tenth below it (so that a pass, O(entries + tenants log tenants) at most, is rare and the cost
 * per entry or character added flat). A pass takes everything back within both bounds at once, and
 * the rest of the way in calls of {@link TRIM_CHUNK} evictions at most ({@link over} holds until
 * then), so that one call never blocks the event loop for a tenth of the bound's evictions (20,000
 * records: ~15-30 ms measured, more under load). The pass spares every live entry added since it
 * began (each call's entry just added, a result that may be asked for again): the room past the
 * first call is not needed, and before the pass was cut into calls such an entry stayed until the
 * bound was next passed. Only when an entry added passes a bound again and the others above an
 * equal share are not enough do they go, oldest first, until back within both bounds (the entry
 * just added stays, as ever). First the dead entries go (expired, or no longer held), whoever holds
 * them, when one can have expired since the last look; then the oldest of the tenants holding more
 * than an equal share, down to it (water-filling, as LiveSessions does for sessions: a tenant
 * holding less than an equal share keeps all it holds, and the room it leaves is shared by the
 * others). So one tenant's flood evicts its own oldest entries, never those of a tenant within its
 * share. The totals are kept as entries come and go: adding and deleting are O(1).
 */
export class TenantShares<E extends SharedEntry> {
  private readonly tenants = new Map<string, Share<E>>();
  private count = 0;
  private total = 0;
  /** No entry can have expired before this time, so a look for dead ones before it would find none. */
  private nextDeathAt = Infinity;
  /** A pass is under way: back within both bounds, not yet a tenth below them. */
  private draining = false;
  /** The look for dead entries of the pass under way, until it is done. */
  private deadScan?: DeadScan<E>;
  /** Evictions left to the call of {@link trim} under way once within both bounds. */
  private chunkLeft = 0;
  /**
   * The entries added since the pass under way began, which it spares: each its tenant's newest, so
   * a tenant's entries after one of them are too. A few: one per call of the pass, as a rule.
   */
  private readonly spared = new Set<E>();
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

  /** Whether a pass is under way (see {@link trim}): its next call goes on with it. */
  get passing(): boolean {
    return this.draining;
  }

  /** Whether either bound is passed, or a pass is under way: {@link trim} is due. */
  get over(): boolean {
    return this.draining || this.pastBounds();
  }

  private pastBounds(): boolean {
    return this.count > this.bounds.maxEntries || this.total > this.bounds.maxChars;
  }

  /** Counts `entry` (not counted yet) as its tenant's newest. */
  add(entry: E): void {
    let share = this.tenants.get(entry.tenant);
    if (!share) this.tenants.set(entry.tenant, (share = { entries: new Set(), chars: 0, nextDeathAt: Infinity, lastExpiresAt: -Infinity, inExpiryOrder: true }));
    share.entries.add(entry);
    if (entry.expiresAt < share.nextDeathAt) share.nextDeathAt = entry.expiresAt;
    if (entry.expiresAt < share.lastExpiresAt) share.inExpiryOrder = false;
    share.lastExpiresAt = entry.expiresAt;
    share.chars += entry.chars;
    this.count++;
    this.total += entry.chars;
    if (entry.expiresAt < this.nextDeathAt) this.nextDeathAt = entry.expiresAt;
    if (this.draining) this.spared.add(entry);
  }

  /** Uncounts `entry`; false when it was not counted. */
  delete(entry: E): boolean {
    const share = this.tenants.get(entry.tenant);
    if (!share?.entries.delete(entry)) return false;
    if (this.spared.size > 0) this.spared.delete(entry);
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
    this.draining = false;
    this.deadScan = undefined;
    this.spared.clear();
  }

  /**
   * Evicts until a tenth below both bounds at `t` (see the class): the dead entries (expired, or
   * `gone`), then the oldest of the tenants over an equal share. `evict` must uncount the entry
   * ({@link delete}). `current`, the entry just added, stays even alone past a bound: a result is
   * never lost at once. Once back within both bounds, a call evicts {@link TRIM_CHUNK} entries at
   * most, and the next calls go on ({@link over}), sparing the live entries added since the pass
   * began (but those needed to get back within both bounds). Given `gone`, the dead are looked for
   * at the start of every pass (a pass takes the total to a tenth below the bound, so that is at
   * most one per tenth added): an entry can be gone at any time, not only once one has expired.
   */
  trim(current: E, t: number, evict: (entry: E) => void, gone?: (entry: E) => boolean): void {
    this.chunkLeft = TRIM_CHUNK;
    if (!this.draining && (gone || t >= this.nextDeathAt)) {
      this.nextDeathAt = Infinity;
      this.deadScan = { shares: this.tenants.values(), shareNext: Infinity };
    }
    this.spared.add(current);
    this.draining = true;
    if (this.deadScan && !this.evictDead(current, t, evict, gone)) return;
    const overEntries = this.count > this.keepEntries;
    const overChars = this.total > this.keepChars;
    if (overEntries || overChars) this.fill(current, evict, overEntries, overChars);
    else this.end();
  }

  /** Ends the pass under way. */
  private end(): void {
    this.draining = false;
    this.spared.clear();
  }

  /**
   * Evicts the oldest of the tenants over an equal share of the bound(s) passed but those spared;
   * stops when the chunk is spent. Then, still past a bound (an entry added in the pass passed it
   * again, and the entries not spared above an equal share were not enough), those spared but
   * `current` go too, until back within both bounds, as before the pass was cut into calls.
   */
  private fill(current: E, evict: (entry: E) => void, overEntries: boolean, overChars: boolean): void {
    // Only the bound passed is shared out (the other's level is Infinity: it cuts nothing).
    const amounts = new Float64Array(this.tenants.size);
    const entryLevel = overEntries ? waterLevel(this.amounts(amounts, (share) => share.entries.size), this.keepEntries) : Infinity;
    const charLevel = overChars ? waterLevel(this.amounts(amounts, (share) => share.chars), this.keepChars) : Infinity;
    if (!this.cut(entryLevel, charLevel, evict)) return;
    if (this.pastBounds()) this.cut(entryLevel, charLevel, evict, current);
    this.end();
  }

  /**
   * Evicts the oldest entries of each tenant above `entryLevel` or `charLevel`, down to them. Without
   * `current`, up to the tenant's first spared entry (those after it were added later: spared too),
   * and false when the call's chunk was spent first; with it, all but `current`, while past a bound.
   */
  private cut(entryLevel: number, charLevel: number, evict: (entry: E) => void, current?: E): boolean {
    // A tenant emptied is deleted from the map as it is iterated: a Map iterator skips it.
    for (const share of this.tenants.values()) {
      if (share.entries.size <= entryLevel && share.chars <= charLevel) continue;
      // One iterator per tenant: evicting from the front with a new one each time is O(n) an entry (evict-oldest.ts).
      for (const entry of share.entries) {
        if (share.entries.size <= entryLevel && share.chars <= charLevel) break;
        if (current === undefined) {
          if (this.spared.has(entry)) break;
          if (this.spent()) return false;
        } else if (entry === current) continue;
        else if (!this.pastBounds()) return true;
        evict(entry);
        this.chunkLeft--;
      }
    }
    return true;
  }

  /** Whether the call under way has evicted its chunk and is within both bounds: the pass goes on in the next call. */
  private spent(): boolean {
    return this.chunkLeft <= 0 && !this.pastBounds();
  }

  /** Fills `into` with `amount` of each tenant's share. */
  private amounts(into: Float64Array, amount: (share: Share<E>) => number): Float64Array {
    let i = 0;
    for (const share of this.tenants.values()) into[i++] = amount(share);
    return into;
  }

  /**
   * Goes on with the look for dead entries but `current` (see {@link trim}): the expired ones, of
   * the tenants where one can be, and given `gone`, those it tells. Those added since the pass
   * began go too: dead, they are read no more, so their going frees room and does nothing else.
   * False when the call's chunk was spent first (the next call goes on from there).
   */
  private evictDead(current: E, t: number, evict: (entry: E) => void, gone?: (entry: E) => boolean): boolean {
    const scan = this.deadScan!;
    for (;;) {
      if (!scan.entries) {
        const next = scan.shares.next();
        if (next.done) break;
        const share = next.value;
        if (!gone && t < share.nextDeathAt) {
          this.nextDeathAt = Math.min(this.nextDeathAt, share.nextDeathAt);
          continue;
        }
        scan.share = share;
        scan.entries = share.entries.values();
        scan.shareNext = Infinity;
      }
      const share = scan.share!;
      for (;;) {
        // Checked before the next entry is taken from the iterator: the next call starts with it.
        if (this.spent()) return false;
        const next = scan.entries.next();
        if (next.done) break;
        const entry = next.value;
        if (entry !== current && (entry.expiresAt <= t || gone?.(entry))) {
          evict(entry);
          this.chunkLeft--;
          continue;
        }
        if (entry.expiresAt < scan.shareNext) scan.shareNext = entry.expiresAt;
        // In expiry order, the first live entry expires first: none after it has expired.
        if (!gone && share.inExpiryOrder && entry.expiresAt > t) break;
      }
      share.nextDeathAt = scan.shareNext;
      this.nextDeathAt = Math.min(this.nextDeathAt, scan.shareNext);
      scan.entries = undefined;
    }
    this.deadScan = undefined;
    return true;
  }
}
