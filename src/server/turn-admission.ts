import * as grpc from '@grpc/grpc-js';
import { RpcError } from './grpc-adapter';

/** Bounds on the Dispatch RPCs running at once on one replica. */
export interface TurnBounds {
  /** Turns running at once, all tenants together. */
  readonly maxTurnsInFlight: number;
  /** Turns running at once for one tenant. */
  readonly maxTurnsPerTenant: number;
  /** Characters of call arguments the running turns hold, all together; a turn alone is always let in. */
  readonly maxArgumentCharsInFlight: number;
  /** Of those, the characters one tenant's running turns hold; a tenant's turn alone is always let in past it. */
  readonly maxArgumentCharsInFlightPerTenant: number;
}

/** What the turn bounds show: turns running now and turns refused since start. */
export interface TurnCounts {
  /** Turns holding a place now, all tenants together (see {@link createTurnAdmission}). */
  readonly inFlight: number;
  /** Turns refused since start for a bound. */
  readonly refused: number;
}

/** Lets turns in within the bounds: `admit` gives the release of an admitted turn, or throws. */
export interface TurnAdmission extends TurnCounts {
  /** Admits a turn of `tenant` whose calls' arguments hold `chars` characters, or throws RESOURCE_EXHAUSTED (reason OVERLOADED) with nothing done. */
  admit(tenant: string, chars: number): () => void;
}

/**
 * Counts the turns running per tenant and in all, and the characters of calls they hold: a
 * turn past any bound is refused at once, before any call of it runs, so that a flood of turns
 * (one tenant's, or everyone's, or a few large ones) cannot hold unbounded memory and tool
 * connections, and one tenant cannot take every place nor every character. A turn is let in
 * whatever its size when no other runs, and past its tenant's characters when none of its
 * tenant's runs. A turn holds its place while its work runs, which may be past its answer: a
 * parallel turn's hard error answers at once, and its place is released once the calls it
 * aborted have unwound (at most the unwind wait later, see `dispatch()`). Clients retry
 * RESOURCE_EXHAUSTED with backoff; a Kubernetes Service spreads the retries over replicas.
 */
export function createTurnAdmission(bounds: TurnBounds): TurnAdmission {
  // Per tenant running turns: how many, and the characters of calls they hold.
  const perTenant = new Map<string, { turns: number; chars: number }>();
  let inFlight = 0;
  let chars = 0;
  let refused = 0;
  return {
    admit(tenant, size) {
      const mine = perTenant.get(tenant) ?? { turns: 0, chars: 0 };
      const full =
        inFlight >= bounds.maxTurnsInFlight
          ? `this dispatch replica is running its limit of ${bounds.maxTurnsInFlight} turns at once (limits.max_turns_in_flight)`
          : mine.turns >= bounds.maxTurnsPerTenant
            ? `tenant "${tenant}" is running its limit of ${bounds.maxTurnsPerTenant} turns at once on this dispatch replica (limits.max_turns_per_tenant)`
            : mine.turns > 0 && mine.chars + size > bounds.maxArgumentCharsInFlightPerTenant
              ? `the turns of tenant "${tenant}" running on this dispatch replica hold ${mine.chars} characters of calls; with this turn's ${size} that would pass its limit of ${bounds.maxArgumentCharsInFlightPerTenant} (limits.max_argument_chars_in_flight_per_tenant)`
              : inFlight > 0 && chars + size > bounds.maxArgumentCharsInFlight
                ? `the turns running on this dispatch replica hold ${chars} characters of calls; with this turn's ${size} that would pass its limit of ${bounds.maxArgumentCharsInFlight} (limits.max_argument_chars_in_flight)`
                : undefined;
      if (full) {
        refused++;
        throw new RpcError(grpc.status.RESOURCE_EXHAUSTED, `${full}; nothing was run, try again shortly`, 'OVERLOADED');
      }
      mine.turns++;
      mine.chars += size;
      perTenant.set(tenant, mine);
      inFlight++;
      chars += size;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inFlight--;
        chars -= size;
        mine.turns--;
        mine.chars -= size;
        if (mine.turns === 0) perTenant.delete(tenant);
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
