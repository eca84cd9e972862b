import type { EventEmitter } from 'node:events';
import CircuitBreaker from 'opossum';
import type { BreakerSettings } from './breaker-settings';
import { createRollingCounts } from './rolling-counts';

/** A breaker's state, as events and GetToolStats name it. */
export type BreakerState = 'closed' | 'open' | 'half_open';

/** An attempt's outcome as a breaker sees it. */
export interface BreakerOutcome {
  readonly ok: boolean;
  /** False for outcomes that say nothing about the tool's health (4xx, replays, cancels). */
  readonly counts: boolean;
}

/** The breaker of one tool on this replica. */
export interface ToolBreaker {
  state(): BreakerState;
  /** Open, or half-open with its probe already out. */
  refusing(): boolean;
  tryAcquire(): boolean;
  record(outcome: BreakerOutcome): void;
  /** Success ratio of counted attempts in the window, weighted by state (closed 1, half-open 0.5, open 0). */
  healthScore(): number;
  shutdown(): void;
}

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
 */
export function createToolBreaker(settings: BreakerSettings, rotation: EventEmitter, onState: (state: BreakerState) => void, now: () => number): ToolBreaker {
  const opossum = new CircuitBreaker(noAction, {
    timeout: false,
    resetTimeout: settings.halfOpenAfterMs,
    rollingPercentilesEnabled: false,
    enableSnapshots: false,
    rotateBucketController: rotation,
  });
  const window = createRollingCounts(settings.windowMs, settings.windowBuckets, now);
  let consecutive = 0;
  let probeAt: number | undefined;
  opossum.on('open', () => onState('open'));
  opossum.on('halfOpen', () => {
    probeAt = undefined;
    onState('half_open');
  });
  opossum.on('close', () => onState('closed'));

  const state = (): BreakerState => (opossum.opened ? 'open' : opossum.halfOpen ? 'half_open' : 'closed');
  const probeOut = () => probeAt !== undefined && now() - probeAt < settings.probeLeaseMs;
  const trips = () => {
    if (consecutive >= settings.consecutiveFailures) return true;
    const { ok, failed } = window.totals();
    return ok + failed >= settings.minCalls && failed >= settings.failureRate * (ok + failed);
  };

  return {
    state,
    refusing: () => opossum.opened || (opossum.halfOpen && probeOut()),
    tryAcquire() {
      if (opossum.closed) return true;
      if (opossum.opened || probeOut()) return false;
      probeAt = now();
      return true;
    },
    record({ ok, counts }) {
      const current = state();
      if (!counts) {
        if (current === 'half_open') probeAt = undefined;
        return;
      }
      window.add(ok);
      if (current === 'half_open') {
        probeAt = undefined;
        if (ok) {
          consecutive = 0;
          window.reset();
          opossum.close();
        } else opossum.open();
        return;
      }
      consecutive = ok ? 0 : consecutive + 1;
      if (current === 'closed' && !ok && trips()) opossum.open();
    },
    healthScore() {
      const { ok, failed } = window.totals();
      const ratio = ok + failed === 0 ? 1 : ok / (ok + failed);
      return ratio * STATE_WEIGHT[state()];
    },
    shutdown: () => opossum.shutdown(),
  };
}
