import type { Logger } from '../log';

/**
 * Told that EraseTenant erased a tenant, on this replica or another sharing the store: what a
 * replica keeps of the whole tenant beside the store and its sessions (its tool stats, its metric
 * label pairs) goes. May be told twice of one erasure: it must be idempotent.
 */
export type TenantErasedListener = (tenant: string) => void;

/** The part of a store that carries EraseTenant's last step to every replica. */
export interface TenantErasures {
  /**
   * Tells this replica's listeners that `tenant` was erased, then, on a store replicas share, the
   * other replicas' (one PUBLISH, waited for: rejects with a StoreUnavailableError when Redis does
   * not take it, and asking EraseTenant again announces it again). A replica whose subscription was
   * down when it was published does not hear it.
   */
  tenantErased(tenant: string): Promise<void>;
  /** Calls `listener` with each tenant erased here and, on a store replicas share, on another replica. */
  onTenantErased(listener: TenantErasedListener): void;
}

/** A store's tenant-erasure listeners: each told in turn; one that throws is logged, and the others still run. */
export function createTenantErasedListeners(logger?: Logger): { add(listener: TenantErasedListener): void; notify(tenant: string): void } {
  const listeners: TenantErasedListener[] = [];
  return {
    add: (listener) => void listeners.push(listener),
    notify(tenant) {
      for (const listener of listeners) {
        try {
          listener(tenant);
        } catch (error) {
          logger?.warn('a tenant erasure listener failed', { tenant, error: error instanceof Error ? error.message : String(error) });
        }
      }
    },
  };
}

/** A store of one replica's: its listeners are all there is to tell. */
export function localTenantErasures(logger?: Logger): TenantErasures {
  const listeners = createTenantErasedListeners(logger);
  return {
    tenantErased: async (tenant) => listeners.notify(tenant),
    onTenantErased: (listener) => listeners.add(listener),
  };
}
