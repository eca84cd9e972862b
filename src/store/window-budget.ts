import { TRIM_TO } from './evict-oldest';
import { StreakIndex } from './streak-index';
import { waterLevel } from './water-level';

/** What {@link WindowBudget} needs of a session: its tenant, its hold and its loop window. */
export interface WindowHolder {
  readonly tenant: string;
  /** Its last call plus the hold, on the steady clock of LiveSessions: until then it counts as in use. */
  heldOnSteady: number;
  window: StreakIndex;
  /** When its window starts again empty (0: empty). */
  windowExpiresAt: number;
}

/**
 * Bounds the loop-window entries the memory store holds across all sessions. A window is useful
 * only whole (a streak is counted over its newest entries), so past the bound whole windows
 * restart empty, until a tenth below it (so that the pass, O(windows), is rare and the cost per
 * record flat): first those of sessions idle past their hold (read on the steady clock, as
 * LiveSessions reads it: after the wall clock stepped back, sessions idle before still are), or
 * expired, least recently recorded first; then, if every window left belongs to a session in use,
 * the least recently recorded ones of the tenants holding the most entries, down to an equal
 * share, as LiveSessions does for sessions: so another tenant's traffic restarts the window of a
 * session in use only while its tenant holds more than an equal share; a flood restarts the
 * flooder's own. The window just recorded goes last. A session evicted for room is forgotten then
 * (the memory store's LiveSessions tells it), not counted until a pass.
 */
export class WindowBudget<S extends WindowHolder> {
  /** Windows counted, least recently recorded first, with their entries as counted. */
  private readonly windows = new Map<S, number>();
  private total = 0;

  constructor(private readonly max: number) {}

  /** Entries counted now. */
  get entries(): number {
    return this.total;
  }

  /**
   * Counts `session`'s window after a record at `t` (wall clock: window expiries) and `now` (the
   * steady clock of holds), restarting windows while over the bound.
   */
  recorded(session: S, t: number, now: number): void {
    const before = this.windows.get(session) ?? 0;
    const size = session.window.size;
    this.windows.delete(session);
    this.windows.set(session, size);
    this.total += size - before;
    if (this.total > this.max) this.trim(session, t, now);
  }

  /** Uncounts `session`'s window: it restarted empty, or the session ended. */
  forget(session: S): void {
    const counted = this.windows.get(session);
    if (counted === undefined) return;
    this.windows.delete(session);
    this.total -= counted;
  }

  clear(): void {
    this.windows.clear();
    this.total = 0;
  }

  private restart(session: S): void {
    this.forget(session);
    session.window = new StreakIndex();
    session.windowExpiresAt = 0;
  }

  private trim(current: S, t: number, now: number): void {
    const target = Math.floor(this.max * TRIM_TO);
    for (const session of this.windows.keys()) {
      if (this.total <= target) return;
      if (session !== current && (session.heldOnSteady <= now || session.windowExpiresAt <= t)) this.restart(session);
    }
    const byTenant = new Map<string, number>();
    for (const [session, counted] of this.windows) byTenant.set(session.tenant, (byTenant.get(session.tenant) ?? 0) + counted);
    const level = waterLevel([...byTenant.values()], target);
    for (const session of this.windows.keys()) {
      if (this.total <= target) return;
      const held = byTenant.get(session.tenant)!;
      if (session === current || held <= level) continue;
      byTenant.set(session.tenant, held - this.windows.get(session)!);
      this.restart(session);
    }
    // Whole windows do not cut evenly to the level (and the window just recorded stays): the least
    // recent go until a tenth below the bound, so that the next pass is as far off.
    for (const session of this.windows.keys()) {
      if (this.total <= target) return;
      if (session !== current) this.restart(session);
    }
  }
}
