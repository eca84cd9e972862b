/** What {@link LiveSessions} needs of a session: its tenant, its last use and when all it holds expires. */
export interface Expires {
  readonly tenant: string;
  /** When everything the session holds has expired: it goes then whenever room is needed. */
  expiresAt: number;
  /** Its last use plus the hold: until then only its own tenant's sessions can push it out. */
  heldUntil: number;
}

type Entry<S> = [key: string, session: S];

/** The most sessions each tenant may keep so that `counts` fit in `room`: the largest tenants give way first. */
function fairShare(counts: readonly number[], room: number): number {
  const sorted = [...counts].sort((a, b) => a - b);
  let left = room;
  for (let i = 0; i < sorted.length; i++) {
    const share = Math.floor(left / (sorted.length - i));
    if (sorted[i]! > share) return share;
    left -= sorted[i]!;
  }
  return Infinity;
}

/**
 * The memory store's sessions, at most `max`; a new session is never refused. When one needs
 * room, the sessions whose state has expired go first; then, until a tenth of `max` is free (so
 * that the pass is rare), those idle past their hold, longest idle first; then, if every session
 * left was used within its hold, the least recently used ones of the tenants that hold the most,
 * down to an equal share. So other sessions' traffic cannot start a session's budget counts and
 * loop window again while it is in use, unless that traffic is its own tenant's and fills the
 * store within the hold; another tenant's flood pushes out only its own sessions.
 */
export class LiveSessions<S extends Expires> {
  private readonly sessions = new Map<string, S>();

  constructor(private readonly max: number) {}

  get(key: string): S | undefined {
    return this.sessions.get(key);
  }

  /** Keeps `session` as `key`, making room first if `max` sessions are kept. */
  add(key: string, session: S, t: number): void {
    if (this.sessions.size >= this.max) this.makeRoom(t);
    this.sessions.set(key, session);
  }

  delete(key: string): void {
    this.sessions.delete(key);
  }

  clear(): void {
    this.sessions.clear();
  }

  /** Frees a tenth of `max` at least (see the class): expired, then idle, then the largest tenants' least recent. */
  private makeRoom(t: number): void {
    const target = this.max - Math.ceil(this.max / 10);
    const idle: Entry<S>[] = [];
    const held: Entry<S>[] = [];
    for (const entry of this.sessions) {
      const session = entry[1];
      if (session.expiresAt <= t) this.sessions.delete(entry[0]);
      else (session.heldUntil <= t ? idle : held).push(entry);
    }
    const byLastUse = (a: Entry<S>, b: Entry<S>) => a[1].heldUntil - b[1].heldUntil;
    idle.sort(byLastUse);
    for (let i = 0; i < idle.length && this.sessions.size > target; i++) this.sessions.delete(idle[i]![0]);
    if (this.sessions.size <= target) return;
    const byTenant = new Map<string, Entry<S>[]>();
    for (const entry of held) {
      const of = byTenant.get(entry[1].tenant);
      if (of) of.push(entry);
      else byTenant.set(entry[1].tenant, [entry]);
    }
    const share = fairShare([...byTenant.values()].map((of) => of.length), target);
    for (const of of byTenant.values()) {
      if (of.length <= share) continue;
      of.sort(byLastUse);
      for (let i = 0; i < of.length - share; i++) this.sessions.delete(of[i]![0]);
    }
  }
}
