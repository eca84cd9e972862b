/** A kept session in the orders of {@link SessionOrder}: all sessions, and its tenant's. */
export interface Placed<S> {
  readonly key: string;
  readonly session: S;
  readonly tenant: TenantSessions<S>;
  /** The session's `heldUntil` when it was last placed: a change tells that it was used since. */
  heldUntil: number;
  /**
   * When its hold ends on the steady clock of LiveSessions (live-sessions.ts), its last use plus the hold:
   * what tells it idle. Unlike `heldUntil`, of the wall clock, it never goes back: after the wall
   * clock steps back (NTP), the sessions idle before still look idle, and go before those in use.
   */
  holdEnds: number;
  prev?: Placed<S>;
  next?: Placed<S>;
  tenantPrev?: Placed<S>;
  tenantNext?: Placed<S>;
}

/** A tenant's sessions, least recently used first. */
export interface TenantSessions<S> {
  readonly name: string;
  count: number;
  first?: Placed<S>;
  last?: Placed<S>;
}

/**
 * The sessions least recently used first, all together and per tenant (doubly linked through the
 * sessions themselves, so that placing one last or taking one out is O(1)), and the tenants by the
 * count of sessions they hold (so that an equal share is found in O(distinct counts), never
 * O(tenants) a call: with more tenants than room, every new session needs room).
 */
export class SessionOrder<S> {
  first?: Placed<S>;
  private last?: Placed<S>;
  readonly tenants = new Map<string, TenantSessions<S>>();
  /** The tenants holding each count of sessions. */
  private readonly byCount = new Map<number, Set<TenantSessions<S>>>();

  /** Places a new session last (the most recently used). */
  add(key: string, session: S, tenant: string, heldUntil: number, holdEnds: number): Placed<S> {
    let of = this.tenants.get(tenant);
    if (!of) this.tenants.set(tenant, (of = { name: tenant, count: 0 }));
    const placed: Placed<S> = { key, session, tenant: of, heldUntil, holdEnds };
    this.recount(of, 1);
    this.link(placed);
    return placed;
  }

  /** Places `placed` last again: used, held until `heldUntil` (`holdEnds` on the steady clock). */
  used(placed: Placed<S>, heldUntil: number, holdEnds: number): void {
    placed.heldUntil = heldUntil;
    placed.holdEnds = holdEnds;
    if (placed.next === undefined && placed.tenantNext === undefined) return;
    this.unlink(placed);
    this.link(placed);
  }

  remove(placed: Placed<S>): void {
    this.unlink(placed);
    this.recount(placed.tenant, -1);
  }

  clear(): void {
    this.first = this.last = undefined;
    this.tenants.clear();
    this.byCount.clear();
  }

  /** The counts of sessions tenants hold, each with how many tenants hold it, fewest first. */
  counts(): [count: number, tenants: number][] {
    return [...this.byCount].map(([count, of]): [number, number] => [count, of.size]).sort((a, b) => a[0] - b[0]);
  }

  /** The tenants holding more than `level` sessions. */
  over(level: number): TenantSessions<S>[] {
    const over: TenantSessions<S>[] = [];
    // One by one: spread into push(), 100,000 tenants would pass the limit on arguments.
    for (const [count, of] of this.byCount) if (count > level) for (const tenant of of) over.push(tenant);
    return over;
  }

  private recount(of: TenantSessions<S>, by: number): void {
    this.byCount.get(of.count)?.delete(of);
    if (this.byCount.get(of.count)?.size === 0) this.byCount.delete(of.count);
    of.count += by;
    if (of.count === 0) {
      this.tenants.delete(of.name);
      return;
    }
    let same = this.byCount.get(of.count);
    if (!same) this.byCount.set(of.count, (same = new Set()));
    same.add(of);
  }

  private link(placed: Placed<S>): void {
    placed.prev = this.last;
    placed.next = undefined;
    if (this.last) this.last.next = placed;
    else this.first = placed;
    this.last = placed;
    const of = placed.tenant;
    placed.tenantPrev = of.last;
    placed.tenantNext = undefined;
    if (of.last) of.last.tenantNext = placed;
    else of.first = placed;
    of.last = placed;
  }

  private unlink(placed: Placed<S>): void {
    if (placed.prev) placed.prev.next = placed.next;
    else this.first = placed.next;
    if (placed.next) placed.next.prev = placed.prev;
    else this.last = placed.prev;
    const of = placed.tenant;
    if (placed.tenantPrev) placed.tenantPrev.tenantNext = placed.tenantNext;
    else of.first = placed.tenantNext;
    if (placed.tenantNext) placed.tenantNext.tenantPrev = placed.tenantPrev;
    else of.last = placed.tenantPrev;
    placed.prev = placed.next = placed.tenantPrev = placed.tenantNext = undefined;
  }
}

/**
 * `waterLevel` (water-level.ts) of amounts given as [amount, how many] fewest first (as {@link SessionOrder.counts}):
 * O(distinct amounts), the same level. Within a run of equal amounts, the first that fits its share
 * leaves the others a share as large at least, so a run is taken whole.
 */
export function waterLevelOfCounts(counts: readonly (readonly [amount: number, times: number])[], budget: number): number {
  let left = budget;
  let rest = counts.reduce((sum, [, times]) => sum + times, 0);
  for (const [amount, times] of counts) {
    const share = Math.floor(left / rest);
    if (amount > share) return share;
    left -= amount * times;
    rest -= times;
  }
  return Infinity;
}
