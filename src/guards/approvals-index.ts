import { listedApproval } from '../pipeline';
import { hashTag, type RedisClient } from '../store/redis';
import type { ApprovalFilter, PendingApproval } from './approvals';

/**
 * Approvals a tenant's index holds across replicas: each replica holds at most 250 waits of a
 * tenant (ApprovalsOptions.maxPendingPerTenant), 1,000 in all. A wait past it is not indexed
 * (ListApprovals on another replica does not show it; it can still be decided anywhere).
 */
export const MAX_INDEXED_APPROVALS = 1000;

/** Approvals one ListApprovals answer holds at most, the first to end first (then `truncated`). */
export const LIST_PAGE_APPROVALS = 100;
/**
 * Bytes of JSON a page reads from Redis at most (its first entry whatever its size): 100 entries
 * of 2,000 characters of arguments (listedApproval) take ~600 KB of CJK, up to ~1.3 MB when the
 * reasons and ids are long and escaped too.
 */
export const LIST_PAGE_BYTES = 1024 * 1024;

/** One page of the approvals waiting; `truncated` when more pass the filter. */
export interface ApprovalsPage {
  readonly approvals: PendingApproval[];
  readonly truncated: boolean;
}

/** The keys of a tenant's approvals waiting on any replica (see approvals-lib.lua), in one cluster slot. */
function indexKeys(tenant: string): [index: string, shown: string, who: string, owners: string, leases: string] {
  const base = `dispatch:approvals:tenant:${hashTag(tenant)}`;
  return [base, `${base}:shown`, `${base}:who`, `${base}:owner`, `${base}:lease`];
}

/**
 * Indexes a waiting approval under `tenant` for as long as it may wait, as ListApprovals shows it,
 * held by `replica`, whose lease (`leaseMs`) it renews (none given: listed whatever its replica);
 * false when the tenant's index is full.
 */
export async function indexApproval(redis: RedisClient, tenant: string, shown: PendingApproval, ttlMs: number, replica = '', leaseMs = 0): Promise<boolean> {
  const json = JSON.stringify(listedApproval(shown));
  return (await redis.dispatchRecordApproval(...indexKeys(tenant), shown.approvalId, ttlMs, json, MAX_INDEXED_APPROVALS, `${shown.tool}\0${shown.sessionId}`, replica, leaseMs)) === 1;
}

/** Takes an ended approval out of its tenant's index, and `lastOf`'s lease there when given (it held no other wait of the tenant). */
export async function unindexApproval(redis: RedisClient, tenant: string, approvalId: string, lastOf = ''): Promise<void> {
  await redis.dispatchForgetApproval(...indexKeys(tenant), approvalId, lastOf);
}

/**
 * Renews `replica`'s lease in the tenant's index for `leaseMs`: its waits of the tenant are listed
 * while it lives, and not once it has lapsed (the replica died, or lost Redis).
 */
export async function renewApprovalsLease(redis: RedisClient, tenant: string, replica: string, leaseMs: number): Promise<void> {
  await redis.dispatchRenewApprovalsLease(...indexKeys(tenant), replica, leaseMs);
}

/**
 * One page of the tenant's approvals waiting on any replica that `filter` passes, the first to end
 * first (expired ones forgotten on the way, and those of a replica whose lease lapsed left out):
 * the script matches the filter on each id's tool and session and reads only the page's JSON, at
 * most `maxEntries` and about LIST_PAGE_BYTES.
 */
export async function indexedApprovals(redis: RedisClient, tenant: string, filter: ApprovalFilter = {}, maxEntries = LIST_PAGE_APPROVALS): Promise<ApprovalsPage> {
  const [more, ...flat] = await redis.dispatchListApprovals(...indexKeys(tenant), filter.sessionId ?? '', filter.tool ?? '', maxEntries, LIST_PAGE_BYTES, MAX_INDEXED_APPROVALS);
  const approvals: PendingApproval[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const approval = parseShown(flat[i]!, flat[i + 1]!);
    if (approval) approvals.push(approval);
  }
  return { approvals, truncated: more === 1 };
}

/** An indexed approval's JSON, checked field by field; undefined when it is not one (written by a later version, or damaged). */
function parseShown(approvalId: string, json: string): PendingApproval | undefined {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const text = (key: string) => (typeof value[key] === 'string' ? (value[key] as string) : '');
  const { requestedAt, expiresAt } = value;
  if (typeof requestedAt !== 'number' || typeof expiresAt !== 'number') return undefined;
  return {
    approvalId,
    sessionId: text('sessionId'),
    toolCallId: text('toolCallId'),
    tool: text('tool'),
    arguments: text('arguments'),
    argumentsModified: value.argumentsModified === true,
    reason: text('reason'),
    requestedAt,
    expiresAt,
  };
}
