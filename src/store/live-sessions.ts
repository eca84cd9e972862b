/** What {@link LiveSessions} needs of a session: its tenant, its last use and when all it holds expires. */
export interface Expires {
  readonly tenant: string;
  /** When everything the session holds has expired: it goes then whenever room is needed. */
  expiresAt: number;
  /** Its last use plus the hold: until then only its own tenant's sessions can push it out. */
  heldUntil: number;
}

import { waterLevel } from './water-level';

type Entry<S> = [key: string, session: S];

/**
 * The memory store's sessions, at most `max`; a new session is never refused. When one needs
 * room, the sessions whose state has expired go first; then, until a tenth of `max` is free (so
 * that the pass is rare), those idle past their hold, longest idle first; then, if every session
 * left was used within its hold, the least recently used ones of the tenants that hold the most,
 * down to an equal share of the room (one session each at least; when even that does not fit, the
 * largest tenants' least recent go one by one). So a tenant's sessions in use are pushed out by
 * another tenant's traffic only while it holds more than an equal share; a flood pushes out the
 * flooding tenant's own.
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
    const level = Math.max(1, waterLevel([...byTenant.values()].map((of) => of.length), target));
    for (const of of byTenant.values()) {
      of.sort(byLastUse);
      if (of.length > level) for (const [key] of of.splice(0, of.length - level)) this.sessions.delete(key);
    }
    // One session per tenant does not fit: the largest tenants' least recent go, one at a time.
    const tenants = [...byTenant.values()];
    while (this.sessions.size >= this.max) {
      const largest = tenants.reduce((a, b) => (b.length > a.length || (b.length === a.length && b.length > 0 && b[0]![1].heldUntil < a[0]![1].heldUntil) ? b : a));
      this.sessions.delete(largest.shift()![0]);
    }
  }
}
