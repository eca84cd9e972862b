import { randomBytes } from 'node:crypto';
import type { SessionScope } from './store';

/**
 * A result handle names its session (so a sharded store finds the session's slot) and a random
 * part. The tenant is never in it: it comes from the caller's credentials.
 */
export function newResultHandle(sessionId: string): string {
  return `rh_${Buffer.from(sessionId).toString('base64url')}.${randomBytes(12).toString('base64url')}`;
}

/** The session a handle belongs to, or undefined for a malformed handle. */
export function handleSession(handle: string): string | undefined {
  const match = /^rh_([A-Za-z0-9_-]*)\.[A-Za-z0-9_-]{16}$/.exec(handle);
  return match ? Buffer.from(match[1]!, 'base64url').toString() : undefined;
}

/** The scope of a handle for a tenant. */
export function handleScope(tenant: string, handle: string): SessionScope | undefined {
  const sessionId = handleSession(handle);
  return sessionId === undefined ? undefined : { tenant, sessionId };
}
