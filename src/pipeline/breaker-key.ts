import { DEFAULT_TENANT } from '../server/principal';

/**
 * The key of a tool's breaker and health: the name of a config-file tool (shared by every tenant,
 * so is its health), or `tenant/name` for a tool a tenant registered, so that one tenant's
 * failures never open another tenant's tool of the same name. Tool names hold no '/'.
 */
export function breakerKey(tool: { readonly tenant: string; readonly name: string }): string {
  return tool.tenant === '' ? tool.name : `${tool.tenant}/${tool.name}`;
}

/**
 * The key of the breaker a call of `tenant` to `tool` goes through: a tenant's own tool's
 * (breakerKey), or for a shared (config-file) tool the calling tenant's own breaker of it (a
 * security probe: one tenant's calls answered 5xx opened a shared tool for every tenant, and its
 * half-open probe every 30 s kept it open); the single tenant of a server without auth (`default`)
 * keeps the tool's one breaker, as before.
 */
export function callBreakerKey(tenant: string, tool: { readonly tenant: string; readonly name: string }): string {
  if (tool.tenant !== '' || soleTenant(tenant)) return breakerKey(tool);
  return `${tenant}/${tool.name}`;
}

/** Whether `tenant` is the one tenant of a server without auth (or none). */
const soleTenant = (tenant: string): boolean => tenant === '' || tenant === DEFAULT_TENANT;

/** A log line's `tenant` field: none for the one tenant of a server without auth. */
export const tenantField = (tenant: string): { tenant?: string } => (soleTenant(tenant) ? {} : { tenant });

/** The tenant ('' for a shared tool) and the tool name of a breaker key. */
export function parseBreakerKey(key: string): { readonly tenant: string; readonly tool: string } {
  const slash = key.lastIndexOf('/');
  return slash < 0 ? { tenant: '', tool: key } : { tenant: key.slice(0, slash), tool: key.slice(slash + 1) };
}
