import type { ApprovalDecision, ApprovalDecisionKind, ApprovalRequest } from '../pipeline';

/** An approval waiting for ResolveApproval, as ListApprovals shows it. */
export interface PendingApproval extends ApprovalRequest {
  readonly approvalId: string;
  /** Epoch ms when the wait began. */
  readonly requestedAt: number;
  /** Epoch ms when it ends unanswered: `requestedAt` plus the approval timeout, or the turn's deadline when sooner. */
  readonly expiresAt: number;
}

/** Which approvals ListApprovals shows; an absent or empty field matches any. */
export interface ApprovalFilter {
  readonly sessionId?: string;
  readonly tool?: string;
}

/** Whether `approval` passes `filter`. */
export const approvalMatches = (approval: PendingApproval, filter: ApprovalFilter): boolean =>
  (!filter.sessionId || approval.sessionId === filter.sessionId) && (!filter.tool || approval.tool === filter.tool);

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

/**
 * Where this replica writes down the approvals it waits for, so that a ResolveApproval reaching
 * another replica can tell at once whether an id waits anywhere, and for whom (the relay's Redis).
 */
export interface PendingRecord {
  /**
   * Records that `approvalId` of `tenant` waits, for at most `ttlMs`, and what ListApprovals shows
   * of it; resolves (never rejects) once written or given up on.
   */
  record(approvalId: string, tenant: string | undefined, ttlMs: number, shown?: PendingApproval): Promise<void>;
  /** Forgets it, without waiting: decided, timed out or cut short. */
  forget(approvalId: string, tenant?: string): void;
}

/** The approvals this replica is waiting for. */
export interface Approvals {
  /**
   * Waits for a decision on `approvalId`; false on refusal, timeout, abort or overflow. `waiting`
   * runs once the wait is taken (not on an overflow), before anyone can resolve it; with a
   * {@link PendingRecord}, once the wait is also recorded there (not when it was cut short
   * meanwhile), so that the id is announced only when every replica can find it. `decided` hears how a
   * wait that was taken ended, before it resolves (see ApprovalDecision).
   */
  wait(approvalId: string, signal: AbortSignal, tenant?: string, waiting?: () => void, request?: ApprovalRequest, decided?: (decision: ApprovalDecision) => void): Promise<boolean>;
  /**
   * Decides a waiting approval of `tenant`; false when it is unknown, decided or another tenant's.
   * The `reason` (a human's, already bounded and escaped: resolve-approval.ts) goes to the wait's
   * `decided` with `tenant` as who decided, before it resolves; only a denial's reaches the model.
   */
  resolve(approvalId: string, approve: boolean, tenant: string, reason?: string): boolean;
  /** True when `resolve` would decide it now: it waits here, for `tenant`. */
  holds(approvalId: string, tenant: string): boolean;
  /** Approvals waiting now. */
  pending(): number;
  /**
   * The approvals waiting here that `tenant` may decide and `filter` passes, the first to expire first (a wait
   * that named no tenant included, as `resolve` decides it). At most `maxPendingPerTenant`: the
   * pipeline's waits all name their tenant.
   */
  list(tenant: string, filter?: ApprovalFilter): PendingApproval[];
  /** Records every wait taken from now on in `record` (and forgets it there once it ends). */
  recordWith(record: PendingRecord): void;
  /** Refuses every waiting approval. */
  close(): void;
}

interface Waiting {
  readonly tenant?: string;
  readonly shown: PendingApproval;
  settle(approved: boolean, decision: ApprovalDecision): void;
}

/** What a wait without a request (one not from the pipeline) shows. */
const UNDESCRIBED: ApprovalRequest = { sessionId: '', toolCallId: '', tool: '', arguments: '', argumentsModified: false, reason: '' };

const ended = (decision: ApprovalDecisionKind): ApprovalDecision => ({ decision });

/** Approvals waiting at once on a replica, all tenants together (ApprovalsOptions.maxPending). */
export const MAX_PENDING_APPROVALS = 1000;

/** The approvals registry behind Ask in interactive mode and the ResolveApproval RPC. */
export function createApprovals(options: ApprovalsOptions = {}): Approvals {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const maxPending = options.maxPending ?? MAX_PENDING_APPROVALS;
  const maxPerTenant = options.maxPendingPerTenant ?? 250;
  const waiting = new Map<string, Waiting>();
  let recorder: PendingRecord | undefined;
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
    wait(approvalId, signal, tenant, onWaiting, request = UNDESCRIBED, decided) {
      const key = tenant ?? '';
      if (signal.aborted || waiting.size >= maxPending || (perTenant.get(key) ?? 0) >= maxPerTenant || waiting.has(approvalId)) return Promise.resolve(false);
      const recordedIn = recorder;
      return new Promise<boolean>((resolve) => {
        // Whether onWaiting ran: a wait is announced once recorded, or as it ends when it ends first.
        let announced = false;
        const announce = () => {
          if (announced) return;
          announced = true;
          onWaiting?.();
        };
        const settle = (approved: boolean, decision: ApprovalDecision, cutShort = false) => {
          if (waiting.get(approvalId) !== entry) return;
          // Taken and ended (timed out, decided, closed) before its record landed: announced now,
          // so that it ends as a wait ("not granted"), not as one refused for want of room. One cut
          // short by its signal before it was announced never was.
          if (!cutShort) announce();
          decided?.(decision);
          waiting.delete(approvalId);
          count(key, -1);
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          recordedIn?.forget(approvalId, tenant);
          resolve(approved);
        };
        // Cut short by its signal; the pipeline, which knows the turn's deadline, names a deadline's abort expired.
        const onAbort = () => settle(false, ended('cancelled'), true);
        const requestedAt = Date.now();
        // The turn's deadline ends the wait (its signal) before the approval timeout when sooner.
        const { endsBy, ...described } = request;
        const expiresAt = Math.min(requestedAt + timeoutMs, endsBy ?? Infinity);
        const shown: PendingApproval = { ...described, approvalId, requestedAt, expiresAt };
        const entry: Waiting = { tenant, shown, settle };
        const timer = setTimeout(() => settle(false, ended('expired')), timeoutMs);
        waiting.set(approvalId, entry);
        count(key, 1);
        signal.addEventListener('abort', onAbort, { once: true });
        if (!recordedIn) {
          announce();
          return;
        }
        // Announced once recorded: a ResolveApproval on another replica then finds it. One that
        // ended meanwhile was announced as it ended (see settle), or, cut short, is not.
        void recordedIn
          .record(approvalId, tenant, Math.max(1, expiresAt - requestedAt), shown)
          .catch(() => undefined)
          .then(() => {
            if (waiting.get(approvalId) === entry) announce();
          });
      });
    },
    resolve(approvalId, approve, tenant, reason) {
      if (!holds(approvalId, tenant)) return false;
      waiting.get(approvalId)!.settle(approve, { decision: approve ? 'approved' : 'denied', decidedBy: tenant, ...(reason ? { reason } : {}) });
      return true;
    },
    holds,
    pending: () => waiting.size,
    list(tenant, filter = {}) {
      const found: PendingApproval[] = [];
      for (const entry of waiting.values()) {
        if ((entry.tenant === undefined || entry.tenant === tenant) && approvalMatches(entry.shown, filter)) found.push(entry.shown);
      }
      // The first to expire first, as ListApprovals answers (and cuts its page): a call's deadline
      // may end a later wait before an earlier one's approval timeout.
      return found.sort((a, b) => a.expiresAt - b.expiresAt);
    },
    recordWith(record) {
      recorder = record;
    },
    close() {
      for (const entry of [...waiting.values()]) entry.settle(false, ended('cancelled'));
    },
  };
}
