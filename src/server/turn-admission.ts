import * as grpc from '@grpc/grpc-js';
import { RpcError } from './grpc-adapter';

/** Bounds on the Dispatch RPCs running at once on one replica. */
export interface TurnBounds {
  /** Turns running at once, all tenants together. */
  readonly maxTurnsInFlight: number;
  /** Turns running at once for one tenant. */
  readonly maxTurnsPerTenant: number;
}

/** What the turn bounds show: turns running now and turns refused since start. */
export interface TurnCounts {
  /** Turns running now, all tenants together. */
  readonly inFlight: number;
  /** Turns refused since start for a bound. */
  readonly refused: number;
}

/** Lets turns in within the bounds: `admit` gives the release of an admitted turn, or throws. */
export interface TurnAdmission extends TurnCounts {
  /** Admits a turn of `tenant`, or throws RESOURCE_EXHAUSTED (reason OVERLOADED) with nothing done. */
  admit(tenant: string): () => void;
}

/**
 * Counts the turns running per tenant and in all: a turn past either bound is refused at once,
 * before any call of it runs, so that a flood of turns (one tenant's, or everyone's) cannot hold
 * unbounded memory and tool connections, and one tenant cannot take every place. Clients retry
 * RESOURCE_EXHAUSTED with backoff; a Kubernetes Service spreads the retries over replicas.
 */
export function createTurnAdmission(bounds: TurnBounds): TurnAdmission {
  const perTenant = new Map<string, number>();
  let inFlight = 0;
  let refused = 0;
  return {
    admit(tenant) {
      const mine = perTenant.get(tenant) ?? 0;
      const full =
        inFlight >= bounds.maxTurnsInFlight
          ? `this dispatch replica is running its limit of ${bounds.maxTurnsInFlight} turns at once (limits.max_turns_in_flight)`
          : mine >= bounds.maxTurnsPerTenant
            ? `tenant "${tenant}" is running its limit of ${bounds.maxTurnsPerTenant} turns at once on this dispatch replica (limits.max_turns_per_tenant)`
            : undefined;
      if (full) {
        refused++;
        throw new RpcError(grpc.status.RESOURCE_EXHAUSTED, `${full}; nothing was run, try again shortly`, 'OVERLOADED');
      }
      perTenant.set(tenant, mine + 1);
      inFlight++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inFlight--;
        const left = perTenant.get(tenant)! - 1;
        if (left === 0) perTenant.delete(tenant);
        else perTenant.set(tenant, left);
      };
    },
    get inFlight() {
      return inFlight;
    },
    get refused() {
      return refused;
    },
  };
}
