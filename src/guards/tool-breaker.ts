import type { EventEmitter } from 'node:events';
import CircuitBreaker from 'opossum';
import { MAX_TIMER_MS } from '../options/limits';
import type { BreakerTicket } from '../pipeline';
import type { BreakerSettings } from './breaker-settings';
import { createRollingCounts } from './rolling-counts';

/** A breaker's state, as events and GetToolStats name it. */
export type BreakerState = 'closed' | 'open' | 'half_open';

/** An attempt's outcome as a breaker sees it. */
export interface BreakerOutcome {
  readonly ok: boolean;
  /** False for outcomes that say nothing about the tool's health (4xx, replays, cancels). */
  readonly counts: boolean;
  /** A failure that found no host of the tool (no worker connected for it): nothing ran. */
  readonly noHost?: boolean;
}

/** The breaker of one tool on this replica. */
export interface ToolBreaker {
  state(): BreakerState;
  /** Open, or half-open with its probe already out. */
  refusing(): boolean;
  /**
   * Admits an attempt whose tool times out after `timeoutMs` (the half-open probe's lease is at
   * least that plus {@link PROBE_LEASE_MARGIN_MS}): its ticket for {@link record}, or undefined.
   */
  tryAcquire(timeoutMs: number): BreakerTicket | undefined;
  /** Records the outcome of the attempt `ticket` admitted. */
  record(ticket: BreakerTicket, outcome: BreakerOutcome): void;
  /**
   * While it refuses, about how long until it may let a call through: until it half-opens, or, its
   * probe out, until the probe's tool times out (by then the probe has closed or re-opened it).
   * Undefined when it does not refuse.
   */
  retryAfterMs(): number | undefined;
  /** Success ratio of counted attempts in the window, weighted by state (closed 1, half-open 0.5, open 0). */
  healthScore(): number;
  /**
   * The tool has a new chance (a worker hosting it connected): an open breaker half-opens now, its
   * next call the probe, not after `halfOpenAfterMs`. A probe that fails opens it for a whole
   * `halfOpenAfterMs` again. Closed or half-open, nothing changes. With `onlyIfNoHost` (a host
   * known before, told again: it may have been unreachable), only a breaker whose opening failure
   * found no host half-opens; one the tool's own failures opened waits its `halfOpenAfterMs`.
   */
  halfOpenNow(onlyIfNoHost?: boolean): void;
  shutdown(): void;
}

/**
 * What a probe's lease adds to its tool's timeout: the time an attempt may take after its tool
 * answered or timed out (the store write, post-tool hooks) before it reports.
 */
export const PROBE_LEASE_MARGIN_MS = 30_000;

const noAction = async () => undefined;
const STATE_WEIGHT: Readonly<Record<BreakerState, number>> = { closed: 1, half_open: 0.5, open: 0 };

/**
 * One tool's breaker. opossum holds the state, moves an open breaker to half-open after
 * `halfOpenAfterMs` and emits the transitions; the triggers (consecutive failures, the failure rate
 * over a rolling window) and the single half-open probe are counted here, because opossum's own
 * accounting counts calls still in flight, opens only above (not at) its percentage, and keeps a
 * latency per call. Its action is never fired, rolling percentiles and snapshots are off, and its
 * bucket rotation is driven by `rotation`, an emitter that never fires: no timer, no allocation per
 * call.
 *
 * An outcome is judged by the state its attempt was admitted in, not the one it ends in. Each
 * generation (a state change, a probe taken or given back) hands out one ticket object, compared
 * by identity. Only the current generation's ticket acts: a closed-period attempt moves the
 * consecutive count and may open the breaker; the current probe closes or re-opens it, or, with an
 * outcome that does not count, frees the probe slot. An outcome from an earlier generation only
 * enters the rolling window (and so the health score and later rate checks): it never opens,
 * closes or frees anything by itself, since the state it reports on has been decided since, by
 * later outcomes or by a probe that ran after it was admitted.
 */
export function createToolBreaker(settings: BreakerSettings, rotation: EventEmitter, onState: (state: BreakerState) => void, now: () => number): ToolBreaker {
  // A longer timer would fire after 1 ms: the breaker would half-open at once (the config refuses it).
  const resetTimeout = Math.min(settings.halfOpenAfterMs, MAX_TIMER_MS);
  const opossum = new CircuitBreaker(noAction, {
    timeout: false,
    resetTimeout,
    rollingPercentilesEnabled: false,
    enableSnapshots: false,
    rotateBucketController: rotation,
  });
  const window = createRollingCounts(settings.windowMs, settings.windowBuckets, now);
  let consecutive = 0;
  let generation = 0;
  let current: BreakerTicket = Object.freeze({ probe: false, generation });
  let probeAt: number | undefined;
  let probeLeaseMs = settings.probeLeaseMs;
  let probeTimeoutMs = 0;
  let halfOpensAt = 0;
  // Half-open before opossum's timer (halfOpenNow): opossum still holds it open, and is closed and
  // opened again, unheard (muted), when the probe fails, for a whole open period from then.
  let early = false;
  let muted = false;
  // Whether the failure that last opened it found no host of the tool (BreakerOutcome.noHost).
  let openedNoHost = false;
  const issue = (probe: boolean) => (current = Object.freeze({ probe, generation: ++generation }));
  const changed = (state: BreakerState) => {
    probeAt = undefined;
    issue(false);
    if (!muted) onState(state);
  };
  opossum.on('open', () => {
    halfOpensAt = now() + resetTimeout;
    early = false;
    changed('open');
  });
  // Half-open early already, it stays as it is (its probe, if out, still the probe).
  opossum.on('halfOpen', () => (early ? (early = false) : changed('half_open')));
  opossum.on('close', () => {
    early = false;
    changed('closed');
  });

  const open = () => opossum.opened && !early;
  const halfOpen = () => opossum.halfOpen || (opossum.opened && early);
  const state = (): BreakerState => (open() ? 'open' : halfOpen() ? 'half_open' : 'closed');
  const probeOut = () => probeAt !== undefined && now() - probeAt < probeLeaseMs;
  const trips = () => {
    if (consecutive >= settings.consecutiveFailures) return true;
    const { ok, failed } = window.totals();
    return ok + failed >= settings.minCalls && failed >= settings.failureRate * (ok + failed);
  };

  return {
    state,
    refusing: () => open() || (halfOpen() && probeOut()),
    tryAcquire(timeoutMs) {
      if (opossum.closed) return current;
      if (open() || probeOut()) return undefined;
      probeAt = now();
      probeTimeoutMs = timeoutMs;
      probeLeaseMs = Math.max(settings.probeLeaseMs, timeoutMs + PROBE_LEASE_MARGIN_MS);
      return issue(true);
    },
    record(ticket, { ok, counts, noHost }) {
      if (counts) window.add(ok);
      if (ticket !== current) return;
      if (ticket.probe) {
        // The probe is spent: its ticket acts once.
        probeAt = undefined;
        issue(false);
        if (!counts) return;
        openedNoHost = !ok && noHost === true;
        if (ok) {
          consecutive = 0;
          window.reset();
          opossum.close();
        } else if (early) {
          muted = true;
          opossum.close();
          muted = false;
          opossum.open();
        } else opossum.open();
        return;
      }
      if (!counts) return;
      consecutive = ok ? 0 : consecutive + 1;
      if (ok || !trips()) return;
      openedNoHost = noHost === true;
      opossum.open();
    },
    retryAfterMs() {
      if (open()) return Math.max(0, halfOpensAt - now());
      return halfOpen() && probeOut() ? Math.max(0, probeAt! + probeTimeoutMs - now()) : undefined;
    },
    healthScore() {
      const { ok, failed } = window.totals();
      const ratio = ok + failed === 0 ? 1 : ok / (ok + failed);
      return ratio * STATE_WEIGHT[state()];
    },
    halfOpenNow(onlyIfNoHost) {
      if (!open() || (onlyIfNoHost && !openedNoHost)) return;
      early = true;
      changed('half_open');
    },
    shutdown: () => opossum.shutdown(),
  };
}
