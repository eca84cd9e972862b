/** What {@link LiveSessions} needs of a session: when everything it holds has expired. */
export interface Expires {
  expiresAt: number;
}

/**
 * The memory store's sessions, at most `max`, none evicted while it holds anything live. A session
 * whose `expiresAt` has passed is swept out when room is needed; when all `max` are live, a new
 * session is refused (`add` returns undefined) rather than another one dropped: dropping one would
 * start its budget counts and loop window again from zero while it is in use, which other sessions'
 * traffic could then do at will. This is a Redis at `maxmemory` (docs/redis.md, "Sizing"): it
 * never evicts a session's state before its TTL, and refuses writes once full.
 */
export class LiveSessions<S extends Expires> {
  private readonly sessions = new Map<string, S>();
  /** No session expires before this time (a lower bound: expiries only grow), so a sweep before it finds none. */
  private nextSweepAt = Infinity;

  constructor(private readonly max: number) {}

  get(key: string): S | undefined {
    return this.sessions.get(key);
  }

  /** Keeps `session` as `key`; false, keeping nothing, when `max` sessions are live at `t`. */
  add(key: string, session: S, t: number): boolean {
    if (this.sessions.size >= this.max && !this.sweep(t)) return false;
    this.sessions.set(key, session);
    if (session.expiresAt < this.nextSweepAt) this.nextSweepAt = session.expiresAt;
    return true;
  }

  delete(key: string): void {
    this.sessions.delete(key);
  }

  clear(): void {
    this.sessions.clear();
    this.nextSweepAt = Infinity;
  }

  /**
   * Removes the sessions expired at `t`; true when that made room. One pass over the sessions, at
   * most once per expiry: until the earliest expiry it found among those left, none is tried.
   */
  private sweep(t: number): boolean {
    if (t < this.nextSweepAt) return false;
    let next = Infinity;
    for (const [key, session] of this.sessions) {
      if (session.expiresAt <= t) this.sessions.delete(key);
      else if (session.expiresAt < next) next = session.expiresAt;
    }
    this.nextSweepAt = next;
    return this.sessions.size < this.max;
  }
}
