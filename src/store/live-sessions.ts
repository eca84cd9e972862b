/** What {@link LiveSessions} needs of a session: when it was last used and when all it holds expires. */
export interface Expires {
  /** When everything the session holds has expired: it goes then whenever room is needed. */
  expiresAt: number;
  /** Its last use plus the hold: until then it is never evicted, not even for room. */
  heldUntil: number;
}

/** The time from which `session` may go to make room. */
const evictableAt = (session: Expires): number => Math.min(session.expiresAt, session.heldUntil);

/**
 * The memory store's sessions, at most `max`. When room is needed, the sessions whose state has
 * expired go, then, if that is not enough, those idle past their hold, longest idle first, until
 * a tenth of `max` is free (so that the pass is rare). A session used within its hold is never
 * evicted: dropping it would start its budget counts and loop window again from zero while it is in
 * use, which other sessions' traffic could otherwise do at will. When every session is held, a new
 * one is refused (`add` returns false), as a Redis at `maxmemory` refuses writes.
 */
export class LiveSessions<S extends Expires> {
  private readonly sessions = new Map<string, S>();
  /** No session is evictable before this time (a lower bound: the times only grow), so a pass before it finds none. */
  private nextSweepAt = Infinity;

  constructor(private readonly max: number) {}

  get(key: string): S | undefined {
    return this.sessions.get(key);
  }

  /** Keeps `session` as `key`; false, keeping nothing, when `max` sessions are held at `t`. */
  add(key: string, session: S, t: number): boolean {
    if (this.sessions.size >= this.max && !this.makeRoom(t)) return false;
    this.sessions.set(key, session);
    if (evictableAt(session) < this.nextSweepAt) this.nextSweepAt = evictableAt(session);
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
   * Removes the sessions expired at `t`, then the longest idle of those past their hold until a
   * tenth of `max` is free; true when that made room. At most one pass per evictable time: until
   * the earliest one it left, none is tried.
   */
  private makeRoom(t: number): boolean {
    if (t < this.nextSweepAt) return false;
    const idle: [string, S][] = [];
    let next = Infinity;
    for (const entry of this.sessions) {
      const session = entry[1];
      if (session.expiresAt <= t) this.sessions.delete(entry[0]);
      else if (session.heldUntil <= t) idle.push(entry);
      else next = Math.min(next, evictableAt(session));
    }
    const target = this.max - Math.ceil(this.max / 10);
    if (this.sessions.size > target && idle.length > 0) {
      idle.sort((a, b) => a[1].heldUntil - b[1].heldUntil);
      let i = 0;
      for (; i < idle.length && this.sessions.size > target; i++) this.sessions.delete(idle[i]![0]);
      if (i < idle.length) next = t;
    } else if (idle.length > 0) next = t;
    this.nextSweepAt = next;
    return this.sessions.size < this.max;
  }
}
