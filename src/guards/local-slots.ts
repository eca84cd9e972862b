import { HardError, type DispatchError } from '../errors';
import { onAbort, type Release, type TurnSignal } from '../pipeline';
import type { ConcurrencyPolicy } from './policy-types';
import type { SlotBound } from './slot-refusal';

/** An attempt waiting for a slot: its calling tenant, the cap it asked under, and how it is given one. */
interface Waiter {
  readonly tenant: string;
  readonly policy: ConcurrencyPolicy;
  readonly grant: (release: Release) => void;
}

/** One tool's slots on this replica: how many are taken, by which tenant, and the attempts waiting, first in line first. */
interface ToolState {
  taken: number;
  /** Slots taken per calling tenant (counted under a cap with a per-tenant share only). */
  readonly byTenant: Map<string, number>;
  readonly waiting: Waiter[];
}

/** A replica's own slots of its capped tools. */
export interface LocalSlots {
  /**
   * A slot of the tool whose slots are `key` for an attempt of `tenant`: the release when the tool
   * and the tenant's share both have one free; else a promise of it, or the refusal `refuse` makes
   * (naming the bound found full) when `policy` allows no wait or its wait ends first.
   */
  take(key: string, tenant: string, policy: ConcurrencyPolicy, signal: TurnSignal, deadline: number, refuse: (bound: SlotBound, waited: number) => DispatchError): Release | Promise<Release>;
  /** Adds the slots taken now, by key, to `into`. */
  addInUse(into: Map<string, number>): void;
}

/** Whether an attempt of `tenant` under `policy` may take a slot of `state` now. */
function fits(state: ToolState, policy: ConcurrencyPolicy, tenant: string): boolean {
  if (state.taken >= policy.maxInFlight) return false;
  return policy.maxInFlightPerTenant === undefined || (state.byTenant.get(tenant) ?? 0) < policy.maxInFlightPerTenant;
}

/** The bound an attempt of `tenant` finds full now. */
const boundOf = (state: ToolState, policy: ConcurrencyPolicy, tenant: string): SlotBound =>
  policy.maxInFlightPerTenant !== undefined && (state.byTenant.get(tenant) ?? 0) >= policy.maxInFlightPerTenant ? 'tenant' : 'tool';

/**
 * A replica's own slots: per key at most the cap's `max_in_flight` taken, and under a
 * `max_in_flight_per_tenant` at most that many by one calling tenant. A slot given back goes to
 * the first waiting attempt that may take it (first come, first served, but an attempt whose
 * tenant is at its share is passed over: it waits for its own tenant's slots, and never holds up
 * another tenant's), or is freed.
 */
export function createLocalSlots(): LocalSlots {
  const states = new Map<string, ToolState>();

  function occupy(key: string, state: ToolState, policy: ConcurrencyPolicy, tenant: string): Release {
    state.taken++;
    const shared = policy.maxInFlightPerTenant !== undefined;
    if (shared) state.byTenant.set(tenant, (state.byTenant.get(tenant) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.taken--;
      if (shared) {
        const left = state.byTenant.get(tenant)! - 1;
        if (left === 0) state.byTenant.delete(tenant);
        else state.byTenant.set(tenant, left);
      }
      // One release frees one slot of the tool and one of its tenant: one waiter at most may take it.
      const at = state.waiting.findIndex((w) => fits(state, w.policy, w.tenant));
      if (at !== -1) {
        const next = state.waiting.splice(at, 1)[0]!;
        next.grant(occupy(key, state, next.policy, next.tenant));
      } else if (state.taken === 0) states.delete(key);
    };
  }

  return {
    take(key, tenant, policy, signal, deadline, refuse) {
      let state = states.get(key);
      if (!state) states.set(key, (state = { taken: 0, byTenant: new Map(), waiting: [] }));
      if (fits(state, policy, tenant)) return occupy(key, state, policy, tenant);
      const waitMs = Math.min(policy.waitMs, deadline - Date.now());
      if (!(waitMs > 0)) throw refuse(boundOf(state, policy, tenant), 0);
      if (signal.aborted) throw HardError.cancelled();
      const { waiting } = state;
      const held = state;
      return new Promise<Release>((resolve, reject) => {
        const leave = () => {
          clearTimeout(timer);
          stopWatching();
          const at = waiting.indexOf(waiter);
          if (at !== -1) waiting.splice(at, 1);
        };
        const waiter: Waiter = {
          tenant,
          policy,
          grant: (release) => {
            leave();
            resolve(release);
          },
        };
        const timer = setTimeout(() => {
          leave();
          reject(refuse(boundOf(held, policy, tenant), waitMs));
        }, waitMs);
        const stopWatching = onAbort(signal, () => {
          leave();
          reject(HardError.cancelled());
        });
        waiting.push(waiter);
      });
    },
    addInUse(into) {
      for (const [key, state] of states) into.set(key, (into.get(key) ?? 0) + state.taken);
    },
  };
}
