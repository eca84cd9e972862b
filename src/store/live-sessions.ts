/** What {@link LiveSessions} needs of a session: its tenant, its last use and when all it holds expires. */
export interface Expires {
  readonly tenant: string;
  /** When everything the session holds has expired: it goes then whenever room is needed. Never lowered. */
  expiresAt: number;
  /** Its last use plus the hold: until then only its own tenant's sessions can push it out. */
  heldUntil: number;
}

import { SessionOrder, waterLevelOfCounts, type Placed } from './session-order';

/** Sessions a call evicts at most once there is room for its own (~2-8 ms); a pass goes on in the next calls. */
export const EVICT_CHUNK = 2048;

/**
 * The memory store's sessions, at most `max`; a new session is never refused. When one needs
 * room, the sessions whose state has expired go first; then, until a tenth of `max` is free (so
 * that the pass is rare), those idle past their hold, longest idle first; then, if every session
 * left was used within its hold, the least recently used ones of the tenants that hold the most,
 * down to an equal share of the room (one session each at least; when even that does not fit, the
 * largest tenants' least recent go one by one). So a tenant's sessions in use are pushed out by
 * another tenant's traffic only while it holds more than an equal share; a flood pushes out the
 * flooding tenant's own.
 *
 * The sessions are kept least recently used first (SessionOrder), so that a pass costs about the
 * sessions it evicts, never a sort of them all (before: at 100,000 sessions, 30-110 ms a pass, and
 * with more tenants than room, when every new session needs one, 30-450 ms a call); a pass's
 * evictions are cut into chunks ({@link EVICT_CHUNK}). A session's use is seen as a change of its
 * `heldUntil` made after {@link get} and before the next call here (the memory store's session()
 * sets it to the call's time plus the hold at once), which places it last: the order of use.
 * Whether a session is idle is read on a steady clock: the times given here (`t`, of the store's
 * wall clock) moved on by however far that clock stepped back since the first (Placed.holdEnds).
 * Before, it was read on the wall clock: once it stepped back (NTP), the sessions idle before
 * looked held until the clock caught up, and only the equal shares made room, pushing out the
 * sessions in use of a tenant over its share while idle ones stayed. The expired are looked for
 * only among those whose hold ended before `t` minus the smallest `expiresAt - heldUntil` a
 * session has had when added or used (an expiry is never lowered, so none held later has
 * expired): with a window TTL longer than the hold, among those idle that much longer.
 */
export class LiveSessions<S extends Expires> {
  private readonly sessions = new Map<string, Placed<S>>();
  private readonly order = new SessionOrder<S>();
  /** The session handed out last by {@link get}: its `heldUntil` may have changed since. */
  private handedOut?: Placed<S>;
  /** The smallest `expiresAt - heldUntil` seen: no session used after `t` minus it has expired at `t`. */
  private minExpiryGap = Infinity;
  /** A pass is under way: there is room, but not yet a tenth of `max`. */
  private draining = false;
  /** How far the wall clock has stepped back in all, seen in the times given here: the steady clock is `t` plus it. */
  private stepped = 0;
  /** The latest time on the steady clock seen: it never goes below. */
  private latest = -Infinity;
  /** `stepped` when the session handed out last was got: its use, if any, was at that step. */
  private handedStep = 0;

  /** `onEvict`: told of each session that leaves, evicted for room, replaced or deleted (once each). */
  constructor(
    private readonly max: number,
    private readonly onEvict?: (session: S) => void,
  ) {}

  /** Sessions kept now. */
  get size(): number {
    return this.sessions.size;
  }

  /** The steady clock's time at the latest {@link get} or {@link add} given a time (see the class). */
  get steadyNow(): number {
    return this.latest;
  }

  /** The session kept as `key`; `t`, when the caller uses it now (moves its `heldUntil` on), is the time of that use. */
  get(key: string, t?: number): S | undefined {
    this.noteUse();
    if (t !== undefined) this.steady(t);
    this.handedStep = this.stepped;
    const placed = this.sessions.get(key);
    this.handedOut = placed;
    return placed?.session;
  }

  /** Keeps `session` as `key`, making room first if `max` sessions are kept. */
  add(key: string, session: S, t: number): void {
    this.noteUse();
    const now = this.steady(t);
    if (this.draining || this.sessions.size >= this.max) this.makeRoom(t, now);
    const old = this.sessions.get(key);
    if (old) this.evict(old);
    this.sessions.set(key, this.order.add(key, session, session.tenant, session.heldUntil, session.heldUntil + this.stepped));
    this.noteGap(session);
  }

  /** The keys of the sessions kept now. */
  keys(): IterableIterator<string> {
    return this.sessions.keys();
  }

  delete(key: string): void {
    this.noteUse();
    const placed = this.sessions.get(key);
    if (placed) this.evict(placed);
  }

  clear(): void {
    this.handedOut = undefined;
    this.draining = false;
    this.sessions.clear();
    this.order.clear();
  }

  /** Places the session handed out last as used now if its `heldUntil` changed. */
  private noteUse(): void {
    const placed = this.handedOut;
    if (placed === undefined) return;
    this.handedOut = undefined;
    const { session } = placed;
    if (session.heldUntil === placed.heldUntil) return;
    this.order.used(placed, session.heldUntil, session.heldUntil + this.handedStep);
    this.noteGap(session);
  }

  /** `t` on the steady clock: the wall clock's time moved on by how far it stepped back since the first `t` (never below the latest). */
  private steady(t: number): number {
    const at = t + this.stepped;
    if (at >= this.latest) return (this.latest = at);
    this.stepped += this.latest - at;
    return this.latest;
  }

  private noteGap(session: S): void {
    const gap = session.expiresAt - session.heldUntil;
    if (gap < this.minExpiryGap) this.minExpiryGap = gap;
  }

  private evict(placed: Placed<S>): void {
    if (this.handedOut === placed) this.handedOut = undefined;
    this.sessions.delete(placed.key);
    this.order.remove(placed);
    this.onEvict?.(placed.session);
  }

  /**
   * Frees a tenth of `max` at least (see the class): expired, then idle, then the largest tenants'
   * least recent. Once there is room for the session added, a call evicts {@link EVICT_CHUNK} at
   * most and the next calls go on (in order: the idle still idle, then the largest tenants'), so that
   * one call never evicts a whole tenth (10,000 sessions of 100,000: 15-45 ms measured). The
   * expired are looked for when a pass begins. `t` is of the wall clock (expiries), `now` of the
   * steady one (holds).
   */
  private makeRoom(t: number, now: number): void {
    const target = this.max - Math.ceil(this.max / 10);
    const order = this.order;
    let left = EVICT_CHUNK;
    const spent = () => left <= 0 && this.sessions.size < this.max;
    const evict = (placed: Placed<S>) => {
      this.evict(placed);
      left--;
    };
    if (!this.draining) {
      for (let placed = order.first; placed !== undefined && placed.holdEnds <= now - this.minExpiryGap; ) {
        const next = placed.next;
        if (placed.session.expiresAt <= t) evict(placed);
        placed = next;
      }
    }
    this.draining = true;
    while (this.sessions.size > target && order.first !== undefined && order.first.holdEnds <= now) {
      if (spent()) return;
      evict(order.first);
    }
    if (this.sessions.size > target) {
      // Every session left is held: each tenant over an equal share is cut to it, least recent first.
      const level = Math.max(1, waterLevelOfCounts(order.counts(), target));
      for (const of of order.over(level)) {
        while (of.count > level) {
          if (spent()) return;
          evict(of.first!);
        }
      }
      // One session per tenant does not fit: every tenant holds one, so the largest tenants' least
      // recent is the least recent of all; they go one at a time.
      while (this.sessions.size >= this.max) evict(order.first!);
    }
    this.draining = false;
  }
}
