import type { CallSummary } from '../events';
import type { LiveTool } from './label-pairs';
import { countCall, type CountersTable, type ToolCounters } from './tool-stats';

/**
 * One tenant's counts sealed for a flush. It is sent unchanged until Redis confirms it: Redis keeps
 * the last `seq` it applied per replica and tenant, so a batch sent again after a lost reply counts once.
 */
export interface SealedDeltas {
  readonly tenant: string;
  /** Grows with every batch this replica seals, whatever the tenant. */
  readonly seq: number;
  readonly tools: ReadonlyMap<string, Readonly<ToolCounters>>;
}

/** What a tenant's calls on this replica add to the shared counts, not yet confirmed by Redis. */
export interface HeldDeltas {
  /** Counted since the tenant's last sealed batch (a copy). */
  readonly pending: ReadonlyMap<string, Readonly<ToolCounters>>;
  /** The tenant's batch sent or waiting to be sent, if any. */
  readonly sealed?: SealedDeltas;
}

/** The counts of this replica's calls that Redis does not hold yet. */
export interface PendingDeltas {
  /** Counts a call of a known tool; false when it was dropped because `maxPairs` pairs are held. */
  add(summary: CallSummary): boolean;
  /**
   * Seals the pending counts of every tenant that has no unconfirmed batch, and returns every
   * unconfirmed batch: the new ones and those whose flush failed, to be sent (again).
   */
  seal(): SealedDeltas[];
  /** Forgets a batch Redis has applied. */
  settle(batch: SealedDeltas): void;
  /** A tenant's held counts, for a read that adds them to what Redis holds. */
  held(tenant: string): HeldDeltas;
  /**
   * Drops a removed tool's held counts, pending and sealed (a sealed batch is sent again without
   * them, under its sequence number); true when there were some. Without `tool`, every tool's of
   * the tenant (EraseTenant).
   */
  forget(tenant: string, tool?: string): boolean;
  /** (tenant, tool) entries held, pending and sealed together. */
  readonly pairs: number;
}

/**
 * Creates an empty set of deltas holding at most `maxPairs` (tenant, tool) entries, and at most
 * `maxPerTenant` of one tenant's, so that while Redis is away one tenant's calls cannot take every
 * place and have every other tenant's counts dropped. A batch counts in the rate window's bucket
 * current when Redis applies it (flush-stats.lua), not when it was sealed. With `live`, a call
 * whose tool is no longer registered adds no pair (countCall).
 */
export function createPendingDeltas(maxPairs: number, maxPerTenant = maxPairs, live?: LiveTool): PendingDeltas {
  const pending: CountersTable = new Map();
  const sealed = new Map<string, SealedDeltas>();
  let pairs = 0;
  // A tenant's pairs held, pending and sealed: what its share bounds.
  const heldBy = (tenant: string) => (pending.get(tenant)?.size ?? 0) + (sealed.get(tenant)?.tools.size ?? 0);
  let seq = 0;
  return {
    add(summary) {
      if (!summary.known) return true;
      const result = countCall(pending, summary, pairs < maxPairs && heldBy(summary.tenant) < maxPerTenant, live);
      if (result === 'added') pairs++;
      return result !== 'dropped';
    },
    seal() {
      for (const [tenant, tools] of pending) {
        if (sealed.has(tenant)) continue;
        sealed.set(tenant, { tenant, seq: ++seq, tools });
        pending.delete(tenant);
      }
      return [...sealed.values()];
    },
    settle(batch) {
      if (sealed.get(batch.tenant) !== batch) return;
      sealed.delete(batch.tenant);
      pairs -= batch.tools.size;
    },
    held(tenant) {
      const tools = pending.get(tenant);
      const copy = new Map<string, Readonly<ToolCounters>>();
      for (const [tool, counters] of tools ?? []) copy.set(tool, { ...counters });
      return { pending: copy, sealed: sealed.get(tenant) };
    },
    forget(tenant, tool) {
      if (tool === undefined) {
        const held = heldBy(tenant);
        pending.delete(tenant);
        sealed.delete(tenant);
        pairs -= held;
        return held > 0;
      }
      let held = pending.get(tenant)?.delete(tool) ?? false;
      if (held) pairs--;
      const batch = sealed.get(tenant);
      if (batch?.tools.has(tool)) {
        // One out now settles nothing: this one is sent (again) after it, and counts once (its seq).
        const tools = new Map(batch.tools);
        tools.delete(tool);
        if (tools.size > 0) sealed.set(tenant, { ...batch, tools });
        else sealed.delete(tenant);
        pairs--;
        held = true;
      }
      return held;
    },
    get pairs() {
      return pairs;
    },
  };
}
