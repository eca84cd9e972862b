import type { SessionScope, Store } from './store';

/**
 * A session's key in this process's own maps (the memory store's sessions and idempotency records,
 * memo entries, scratch directories, session budgets): tenant, NUL, session id. Unambiguous because
 * a session id may not hold NUL nor a tenant name a control character (both are refused where they
 * enter). Keys of what belongs to a session start with it and a NUL.
 */
export const localSessionKey = (scope: SessionScope): string => `${scope.tenant}\u0000${scope.sessionId}`;

/** How many session ids {@link Store.tenantSessions} hands out at a time. */
export const TENANT_SESSIONS_BATCH = 1000;

/**
 * The ids of `tenant`'s sessions among `keyLists` (local session keys), each once, in batches: the
 * ids are taken at once, so sessions ended (deleted from those lists) while the batches are read
 * do not disturb the walk.
 */
export async function* tenantSessionIds(tenant: string, keyLists: readonly Iterable<string>[]): AsyncGenerator<string[]> {
  const head = `${tenant}\u0000`;
  const ids = new Set<string>();
  for (const keys of keyLists) for (const key of keys) if (key.startsWith(head)) ids.add(key.slice(head.length));
  const all = [...ids];
  for (let i = 0; i < all.length; i += TENANT_SESSIONS_BATCH) yield all.slice(i, i + TENANT_SESSIONS_BATCH);
}
