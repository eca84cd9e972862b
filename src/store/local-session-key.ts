import type { SessionScope } from './store';

/**
 * A session's key in this process's own maps (the memory store's sessions and idempotency records,
 * memo entries, scratch directories, session budgets): tenant, NUL, session id. Unambiguous because
 * a session id may not hold NUL nor a tenant name a control character (both are refused where they
 * enter). Keys of what belongs to a session start with it and a NUL.
 */
export const localSessionKey = (scope: SessionScope): string => `${scope.tenant}\u0000${scope.sessionId}`;
