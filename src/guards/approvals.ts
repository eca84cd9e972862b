/** Options of {@link createApprovals}. */
export interface ApprovalsOptions {
  /** Time an Ask waits for ResolveApproval before it counts as refused, in ms. @default 120000 (Limits.approvalTimeoutMs) */
  readonly timeoutMs?: number;
  /** Approvals waiting at once; past it an Ask is refused at once. @default 1000 */
  readonly maxPending?: number;
  /**
   * Approvals waiting at once for one tenant, so that one tenant's asks cannot take every place
   * and have every other tenant's refused. @default 250
   */
  readonly maxPendingPerTenant?: number;
}

/** The approvals this replica is waiting for. */
export interface Approvals {
  /**
   * Waits for a decision on `approvalId`; false on refusal, timeout, abort or overflow. `waiting`
   * runs once the wait is taken (not on an overflow), before anyone can resolve it.
   */
  wait(approvalId: string, signal: AbortSignal, tenant?: string, waiting?: () => void): Promise<boolean>;
  /** Decides a waiting approval of `tenant`; false when it is unknown, decided or another tenant's. */
  resolve(approvalId: string, approve: boolean, tenant: string): boolean;
  /** True when `resolve` would decide it now: it waits here, for `tenant`. */
  holds(approvalId: string, tenant: string): boolean;
  /** Approvals waiting now. */
  pending(): number;
  /** Refuses every waiting approval. */
  close(): void;
}

interface Waiting {
  readonly tenant?: string;
  settle(approved: boolean): void;
}

/** The approvals registry behind Ask in interactive mode and the ResolveApproval RPC. */
export function createApprovals(options: ApprovalsOptions = {}): Approvals {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const maxPending = options.maxPending ?? 1000;
  const maxPerTenant = options.maxPendingPerTenant ?? 250;
  const waiting = new Map<string, Waiting>();
  const perTenant = new Map<string, number>();
  const count = (tenant: string, delta: number) => {
    const n = (perTenant.get(tenant) ?? 0) + delta;
    if (n === 0) perTenant.delete(tenant);
    else perTenant.set(tenant, n);
  };
  const holds = (approvalId: string, tenant: string): boolean => {
    const entry = waiting.get(approvalId);
    return entry !== undefined && (entry.tenant === undefined || entry.tenant === tenant);
  };
  return {
    wait(approvalId, signal, tenant, onWaiting) {
      const key = tenant ?? '';
      if (signal.aborted || waiting.size >= maxPending || (perTenant.get(key) ?? 0) >= maxPerTenant || waiting.has(approvalId)) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const settle = (approved: boolean) => {
          if (waiting.get(approvalId) !== entry) return;
          waiting.delete(approvalId);
          count(key, -1);
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(approved);
        };
        const onAbort = () => settle(false);
        const entry: Waiting = { tenant, settle };
        const timer = setTimeout(() => settle(false), timeoutMs);
        waiting.set(approvalId, entry);
        count(key, 1);
        signal.addEventListener('abort', onAbort, { once: true });
        onWaiting?.();
      });
    },
    resolve(approvalId, approve, tenant) {
      if (!holds(approvalId, tenant)) return false;
      waiting.get(approvalId)!.settle(approve);
      return true;
    },
    holds,
    pending: () => waiting.size,
    close() {
      for (const entry of [...waiting.values()]) entry.settle(false);
    },
  };
}
