import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import type { DestinationPolicy } from './destination-policy';

/** The message refusing a tenant's tool named as one of the operator's (RegisterTools, a worker's hello). */
export function operatorToolMessage(where: string, name: string): string {
  return `${where}: tool "${name}" is the operator's (from the config file or an MCP server); a tenant cannot register, replace or host a tool of that name`;
}

/** Why an HTTP tool's URL may not be registered by a tenant, or undefined (checkSpec has parsed it). */
export function deniedDestination(spec: ToolSpec, policy: DestinationPolicy): string | undefined {
  if (spec.executor.case !== 'http') return undefined;
  const { hostname } = new URL(spec.executor.value.url);
  const rule = policy.checkHost(hostname);
  return rule === undefined ? undefined : `http.url's host ${hostname} is denied by ${rule}`;
}

/** The refusal of a tenant's tool whose executor is an operator's MCP server, unless the operator allows it. */
export function tenantMcpMessage(where: string, name: string): string {
  return `${where} ("${name}"): an mcp executor is refused: the MCP servers are the operator's, and their tools are shared as the config file declares them (registry.allow_tenant_mcp in the config file lets tenants name them); call the imported tool, or register an http or worker tool`;
}

/**
 * The built-ins a tenant may name in a tool of its own, under any name, effect, schema and settings:
 * the service's, which act on their arguments alone (`echo` returns them; `sleep` waits, then
 * returns them). Any other (an embedder's `builtins`, or one added to BUILTIN_TOOLS later) runs the
 * operator's code inside dispatch: like an MCP server's tools, it is shared as the config file
 * declares it, and a tenant's tool over it would call it under another name (past the policies and
 * the schema of the config file's tool) with the effect the tenant chose.
 */
export const TENANT_BUILTINS: ReadonlySet<string> = new Set(['echo', 'sleep']);

/** The refusal of a tenant's tool whose executor is a built-in not in {@link TENANT_BUILTINS}, or undefined. */
export function tenantBuiltinRefusal(where: string, spec: ToolSpec): string | undefined {
  if (spec.executor.case !== 'builtin' || TENANT_BUILTINS.has(spec.executor.value.name)) return undefined;
  // The same refusal whether the built-in exists or not: it tells nothing of the embedder's.
  return `${where} ("${spec.name}"): builtin ${JSON.stringify(spec.executor.value.name)} is refused: tenants may register the built-ins ${[...TENANT_BUILTINS].join(' and ')} only; the others run the operator's code inside dispatch and are shared as the config file declares them (its names, effects and policies); call the config file's tool, ask the operator to declare one, or register an http or worker tool`;
}

/** The refusal of a tenant's tool declaring skip_redaction, unless the operator allows it. */
export function skipRedactionMessage(where: string, name: string): string {
  return `${where} ("${name}"): skip_redaction is refused: this deployment does not let tenants turn redaction off (registry.allow_tenant_skip_redaction in the config file); declare the tool in the config file, or ask the operator`;
}
