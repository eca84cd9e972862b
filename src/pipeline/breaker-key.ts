/**
 * The key of a tool's breaker and health: the name of a config-file tool (shared by every tenant,
 * so is its health), or `tenant/name` for a tool a tenant registered, so that one tenant's
 * failures never open another tenant's tool of the same name. Tool names hold no '/'.
 */
export function breakerKey(tool: { readonly tenant: string; readonly name: string }): string {
  return tool.tenant === '' ? tool.name : `${tool.tenant}/${tool.name}`;
}

/** The tenant ('' for a shared tool) and the tool name of a breaker key. */
export function parseBreakerKey(key: string): { readonly tenant: string; readonly tool: string } {
  const slash = key.lastIndexOf('/');
  return slash < 0 ? { tenant: '', tool: key } : { tenant: key.slice(0, slash), tool: key.slice(slash + 1) };
}
