import { hashTag, type RedisClient } from '../store/redis';
import type { PendingApproval } from './approvals';

/**
 * Approvals a tenant's index holds across replicas, and so the most ListApprovals answers: each
 * replica holds at most 250 waits of a tenant (ApprovalsOptions.maxPendingPerTenant), 1,000 in all.
 * A wait past it is not indexed (ListApprovals on another replica does not show it; it can still
 * be decided anywhere).
 */
export const MAX_INDEXED_APPROVALS = 1000;

/** The keys of a tenant's approvals waiting on any replica (see approvals-lib.lua), in one cluster slot. */
function indexKeys(tenant: string): [index: string, shown: string] {
  const base = `dispatch:approvals:tenant:${hashTag(tenant)}`;
  return [base, `${base}:shown`];
}

/** Indexes a waiting approval under `tenant` for as long as it may wait; false when the tenant's index is full. */
export async function indexApproval(redis: RedisClient, tenant: string, shown: PendingApproval, ttlMs: number): Promise<boolean> {
  const [index, shownKey] = indexKeys(tenant);
  return (await redis.dispatchRecordApproval(index, shownKey, shown.approvalId, ttlMs, JSON.stringify(shown), MAX_INDEXED_APPROVALS)) === 1;
}

/** Takes an ended approval out of its tenant's index. */
export async function unindexApproval(redis: RedisClient, tenant: string, approvalId: string): Promise<void> {
  const [index, shownKey] = indexKeys(tenant);
  await redis.dispatchForgetApproval(index, shownKey, approvalId);
}

/** The tenant's approvals waiting on any replica, the first to end first (expired ones forgotten on the way). */
export async function indexedApprovals(redis: RedisClient, tenant: string): Promise<PendingApproval[]> {
  const [index, shownKey] = indexKeys(tenant);
  const flat = await redis.dispatchListApprovals(index, shownKey, MAX_INDEXED_APPROVALS);
  const found: PendingApproval[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const approval = parseShown(flat[i]!, flat[i + 1]!);
    if (approval) found.push(approval);
  }
  return found;
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
