import { EventEmitter } from 'node:events';
import type { BreakerGate, Guards } from '../pipeline';
import { DEFAULT_BREAKER_SETTINGS, type BreakerSettings } from './breaker-settings';
import { createToolBreaker, type BreakerState, type ToolBreaker } from './tool-breaker';

/** Options of {@link createBreakers}. */
export interface BreakersOptions {
  /** Settings for a tool's breaker, asked once when the tool is first seen. @default the defaults for every tool */
  readonly settingsFor?: (tool: string) => BreakerSettings;
  /** Told of every state change (BREAKER_STATE). */
  readonly onState?: (tool: string, state: BreakerState) => void;
  /** Breakers kept; past it the oldest closed one is dropped, else the oldest half-open one with no probe out. @default 10000 */
  readonly maxBreakers?: number;
  /**
   * Clock of the breakers' open periods, probe leases and rolling windows, in ms; only differences
   * are read. Monotonic by default: a wall clock stepped (NTP, a VM resumed) would move them all at
   * once. For tests. @default performance.now
   */
  readonly now?: () => number;
}

/** What GetToolStats reads of the breakers. */
export interface BreakerStats {
  /** The tool's breaker state; `closed` for a tool never seen. */
  state(tool: string): BreakerState;
  /** 0..1: the success ratio of counted attempts in the window, weighted by state; 1 for a tool never seen. */
  healthScore(tool: string): number;
}

/** How many breakers a replica holds: one per tool called since it was registered, up to maxBreakers. */
export interface HeldBreakers {
  readonly size: number;
}

/** The breakers of this replica: the pipeline's gate, the stats, and shutdown. */
export interface Breakers extends BreakerStats {
  readonly gate: BreakerGate & BreakerStats & HeldBreakers;
  /**
   * Drops the breaker of a tool removed from the registry, at once: the name registered again starts
   * closed. Told once the removal has happened (ToolRegistry.onRemoved), never
   * before: nothing waits here for a removal in flight, which may fail and keep the tool.
   */
  forget(tool: string): void;
  close(): void;
}

/**
 * One breaker per tool per replica, created on first use. The gate is keyed by the name the
 * attempt asks for; outcomes are recorded under the name that ran (the same tool, unless a
 * correction chose a fallback), with the ticket the gate gave. Tickets are compared by identity: one
 * recorded on another breaker, or on one created since its own was dropped, only counts in the
 * window. Each replica keeps its own breakers; nothing of them is shared through Redis.
 */
export function createBreakers(options: BreakersOptions = {}): Breakers {
  const settingsFor = options.settingsFor ?? (() => DEFAULT_BREAKER_SETTINGS);
  const maxBreakers = options.maxBreakers ?? 10_000;
  const now = options.now ?? (() => performance.now());
  const rotation = new EventEmitter().setMaxListeners(0);
  const breakers = new Map<string, ToolBreaker>();

  /** Drops a breaker; one not closed is told closed (BREAKER_STATE, the gauge): its tool's next breaker is. */
  const drop = (name: string, breaker: ToolBreaker) => {
    const state = breaker.state();
    breaker.shutdown();
    breakers.delete(name);
    if (state !== 'closed') options.onState?.(name, 'closed');
  };
  // A half-open breaker with no probe out goes too (past the closed ones), or breakers of tools
  // that are never called again (their probe never taken) would pile up past maxBreakers.
  const dropOne = () => {
    for (const [name, breaker] of breakers) if (breaker.state() === 'closed') return drop(name, breaker);
    for (const [name, breaker] of breakers) if (breaker.state() === 'half_open' && !breaker.refusing()) return drop(name, breaker);
  };
  const breakerOf = (tool: string): ToolBreaker => {
    let breaker = breakers.get(tool);
    if (!breaker) {
      if (breakers.size >= maxBreakers) dropOne();
      breaker = createToolBreaker(settingsFor(tool), rotation, (state) => options.onState?.(tool, state), now);
      breakers.set(tool, breaker);
    }
    return breaker;
  };

  const stats: BreakerStats = {
    state: (tool) => breakers.get(tool)?.state() ?? 'closed',
    healthScore: (tool) => breakers.get(tool)?.healthScore() ?? 1,
  };
  const gate: BreakerGate & BreakerStats & HeldBreakers = {
    ...stats,
    get size() {
      return breakers.size;
    },
    isOpen: (tool) => breakers.get(tool)?.refusing() ?? false,
    retryAfterMs: (tool) => breakers.get(tool)?.retryAfterMs(),
    tryAcquire: (tool, timeoutMs) => breakerOf(tool).tryAcquire(timeoutMs),
    // A breaker dropped since its ticket was given (its tool removed, or evicted) is not made again
    // for it: that ticket would only count in the window, and a removed tool's breaker would be held.
    record: (tool, ticket, outcome) => breakers.get(tool)?.record(ticket, outcome),
    halfOpen: (tool, onlyIfNoHost) => breakers.get(tool)?.halfOpenNow(onlyIfNoHost),
    openTools: () => [...breakers].filter(([, breaker]) => breaker.state() === 'open').map(([tool]) => tool),
  };
  return {
    ...stats,
    gate,
    forget(tool) {
      const breaker = breakers.get(tool);
      if (breaker) drop(tool, breaker);
    },
    close() {
      for (const breaker of breakers.values()) breaker.shutdown();
      breakers.clear();
    },
  };
}

/** The breaker stats behind a pipeline's guards, when its gate is one of these breakers. */
export function breakerStatsOf(guards: Pick<Guards, 'breaker'>): BreakerStats | undefined {
  const gate = guards.breaker as Partial<BreakerStats>;
  return typeof gate.state === 'function' && typeof gate.healthScore === 'function' ? (gate as BreakerStats) : undefined;
}
