import * as grpc from '@grpc/grpc-js';
import { RpcError } from './grpc-adapter';

/**
 * Counts an RPC's calls running at once on this replica, per tenant and in all: `admit` gives the
 * release of an admitted call, or throws RESOURCE_EXHAUSTED (reason OVERLOADED) at once, naming
 * `rpc` and the bound, with `advice` after. ReadResult and ListApprovals are bounded so, that one
 * tenant's flood cannot take the store's time from every call.
 */
export function concurrentCalls(rpc: string, maxInFlight: number, maxPerTenant: number, advice: string): (tenant: string) => () => void {
  const perTenant = new Map<string, number>();
  let inFlight = 0;
  return (tenant) => {
    const mine = perTenant.get(tenant) ?? 0;
    const full =
      inFlight >= maxInFlight
        ? `this dispatch replica is running its limit of ${maxInFlight} ${rpc} calls at once`
        : mine >= maxPerTenant
          ? `tenant "${tenant}" is running its limit of ${maxPerTenant} ${rpc} calls at once on this dispatch replica`
          : undefined;
    if (full) throw new RpcError(grpc.status.RESOURCE_EXHAUSTED, `${full}; ${advice}`, 'OVERLOADED');
    inFlight++;
    perTenant.set(tenant, mine + 1);
    return () => {
      inFlight--;
      const left = perTenant.get(tenant)! - 1;
      if (left === 0) perTenant.delete(tenant);
      else perTenant.set(tenant, left);
    };
  };
}
