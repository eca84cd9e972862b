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
  /** Tool calls the running turns may run at once, all together; a turn alone is always let in. */
  readonly maxCallsInFlight: number;
  /** Of those, the calls one tenant's running turns may run at once; a tenant's turn alone is always let in past it. */
  readonly maxCallsInFlightPerTenant: number;
}

/** What the turn bounds show: turns running now and turns refused since start. */
export interface TurnCounts {
  /** Turns holding a place now, all tenants together (see {@link createTurnAdmission}). */
  readonly inFlight: number;
  /** Tool calls the turns holding a place may run at once, all tenants together (each turn's peak, see peakCalls). */
  readonly callsInFlight: number;
  /** Turns refused since start for a bound. */
  readonly refused: number;
}

/** Lets turns in within the bounds: `admit` gives the release of an admitted turn, or throws. */
export interface TurnAdmission extends TurnCounts {
  /**
   * Admits a turn of `tenant` whose calls' arguments hold `chars` characters and that runs at most
   * `calls` tool calls at once (see peakCalls; 1 when left out), or throws RESOURCE_EXHAUSTED (reason
   * OVERLOADED) with nothing done.
   */
  admit(tenant: string, chars: number, calls?: number): () => void;
}

/** A tenant's running turns: how many, the characters of calls they hold, the calls they may run at once. */
interface TenantLoad {
  turns: number;
  chars: number;
  calls: number;
}

/**
 * Counts the turns running per tenant and in all, the characters of calls they hold and the tool
 * calls they may run at once: a turn past any bound is refused at once, before any call of it
 * runs, so that a flood of turns (one tenant's, or everyone's, or a few large or wide ones) cannot
 * hold unbounded memory and tool connections, and one tenant cannot take every place, character
 * or call. A turn is let in whatever its size when no other runs, and past its tenant's
 * characters and calls when none of its tenant's runs. A turn holds its place while its work
 * runs, which may be past its answer: a parallel turn's hard error answers at once, and its place
 * is released once the calls it aborted have unwound (at most the unwind wait later, see
 * `dispatch()`). Clients retry RESOURCE_EXHAUSTED with backoff; a Kubernetes Service spreads the
 * retries over replicas.
 */
export function createTurnAdmission(bounds: TurnBounds): TurnAdmission {
  const perTenant = new Map<string, TenantLoad>();
  let inFlight = 0;
  let chars = 0;
  let calls = 0;
  let refused = 0;
  // Why a turn of `tenant` holding `size` characters and `width` calls is refused, or undefined.
  const refusal = (tenant: string, mine: TenantLoad, size: number, width: number): string | undefined => {
    if (inFlight >= bounds.maxTurnsInFlight) return `this dispatch replica is running its limit of ${bounds.maxTurnsInFlight} turns at once (limits.max_turns_in_flight)`;
    if (mine.turns >= bounds.maxTurnsPerTenant) return `tenant "${tenant}" is running its limit of ${bounds.maxTurnsPerTenant} turns at once on this dispatch replica (limits.max_turns_per_tenant)`;
    if (mine.turns > 0 && mine.chars + size > bounds.maxArgumentCharsInFlightPerTenant) {
      return `the turns of tenant "${tenant}" running on this dispatch replica hold ${mine.chars} characters of calls; with this turn's ${size} that would pass its limit of ${bounds.maxArgumentCharsInFlightPerTenant} (limits.max_argument_chars_in_flight_per_tenant)`;
    }
    if (inFlight > 0 && chars + size > bounds.maxArgumentCharsInFlight) {
      return `the turns running on this dispatch replica hold ${chars} characters of calls; with this turn's ${size} that would pass its limit of ${bounds.maxArgumentCharsInFlight} (limits.max_argument_chars_in_flight)`;
    }
    // A share that is the whole limit (a single tenant) is checked by the limit, and named as it.
    if (bounds.maxCallsInFlightPerTenant < bounds.maxCallsInFlight && mine.turns > 0 && mine.calls + width > bounds.maxCallsInFlightPerTenant) {
      return `the turns of tenant "${tenant}" running on this dispatch replica may run ${mine.calls} tool calls at once; with this turn's ${width} that would pass its limit of ${bounds.maxCallsInFlightPerTenant} (limits.max_calls_in_flight_per_tenant)`;
    }
    if (inFlight > 0 && calls + width > bounds.maxCallsInFlight) {
      return `the turns running on this dispatch replica may run ${calls} tool calls at once; with this turn's ${width} that would pass its limit of ${bounds.maxCallsInFlight} (limits.max_calls_in_flight)`;
    }
    return undefined;
  };
  return {
    admit(tenant, size, width = 1) {
      const mine = perTenant.get(tenant) ?? { turns: 0, chars: 0, calls: 0 };
      const full = refusal(tenant, mine, size, width);
      if (full) {
        refused++;
        throw new RpcError(grpc.status.RESOURCE_EXHAUSTED, `${full}; nothing was run, try again shortly`, 'OVERLOADED');
      }
      mine.turns++;
      mine.chars += size;
      mine.calls += width;
      perTenant.set(tenant, mine);
      inFlight++;
      chars += size;
      calls += width;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inFlight--;
        chars -= size;
        calls -= width;
        mine.turns--;
        mine.chars -= size;
        mine.calls -= width;
        if (mine.turns === 0) perTenant.delete(tenant);
      };
    },
    get inFlight() {
      return inFlight;
    },
    get callsInFlight() {
      return calls;
    },
    get refused() {
      return refused;
    },
  };
}
