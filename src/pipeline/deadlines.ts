import { MAX_TIMER_MS } from '../options/limits';

/** A pending deadline; pass it back to {@link Deadlines.cancel}. */
export interface Deadline {
  /** When it is due, on the deadlines' clock (set by {@link Deadlines.schedule}). */
  at: number;
  /** Its place among the pending deadlines, -1 when not pending (kept by {@link Deadlines}). */
  slot: number;
  fire(): void;
}

/** A timer may fire this early (ms); a deadline this close to now counts as reached. */
const EARLY_FIRE_TOLERANCE_MS = 1;

/**
 * Many deadlines on one timer. Every call has a timeout that almost never fires; a setTimeout
 * and clearTimeout per call allocate a timer, and with few calls in flight Node creates and drops
 * its timer list, and re-arms libuv, every time. Here adding and cancelling a deadline is an array
 * push and a swap with the last (each deadline knows its slot: a Set's table is reallocated as it
 * grows and shrinks, every turn when few calls are in flight); the one timer is armed for the
 * earliest deadline and moved only when a new one comes sooner. When it fires, every deadline
 * reached fires and the timer is armed for the next.
 * The timer is unref'd: a deadline never keeps the process alive by itself.
 */
export class Deadlines {
  private readonly pending: Deadline[] = [];
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Infinity;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Runs `fire` after `ms` unless cancelled first. */
  add(ms: number, fire: () => void): Deadline {
    return this.schedule({ at: 0, slot: -1, fire }, ms);
  }

  /** Calls `deadline.fire()` after `ms` unless cancelled first (an object that is its own entry: no closure). */
  schedule<D extends Deadline>(deadline: D, ms: number): D {
    deadline.at = this.now() + ms;
    if (deadline.slot === -1) deadline.slot = this.pending.push(deadline) - 1;
    if (deadline.at < this.armedAt) this.arm(deadline.at);
    return deadline;
  }

  cancel(deadline: Deadline | undefined): void {
    if (deadline && deadline.slot !== -1) this.remove(deadline);
  }

  /**
   * Stops the timer when no deadline is pending (an app's close): armed for a deadline cancelled
   * since, it would fire for nothing, up to a call's timeout later, and keep what it closes over
   * alive until then (in a jest worker, each test file's whole module graph).
   */
  disarmIfIdle(): void {
    if (this.pending.length > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
  }

  /** Deadlines waiting (for tests and diagnostics). */
  get size(): number {
    return this.pending.length;
  }

  private remove(deadline: Deadline): void {
    const last = this.pending.pop()!;
    if (last !== deadline) {
      this.pending[deadline.slot] = last;
      last.slot = deadline.slot;
    }
    deadline.slot = -1;
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.armedAt = at;
    this.timer = setTimeout(() => this.expire(), Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(at - this.now()))));
    this.timer.unref();
  }

  private expire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const now = this.now() + EARLY_FIRE_TOLERANCE_MS;
    const due: Deadline[] = [];
    let next = Infinity;
    for (const deadline of this.pending) {
      if (deadline.at <= now) due.push(deadline);
      else if (deadline.at < next) next = deadline.at;
    }
    for (const deadline of due) this.remove(deadline);
    if (next !== Infinity) this.arm(next);
    // A late timer (a busy loop) finds several due at once: they fire in the order of their times.
    if (due.length > 1) due.sort((a, b) => a.at - b.at);
    for (const deadline of due) deadline.fire();
  }
}

/** The process's deadlines: the timeouts of attempts and the deadlines of RPCs. */
export const DEADLINES = new Deadlines();
