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

/** The refusal of a tenant's tool declaring skip_redaction, unless the operator allows it. */
export function skipRedactionMessage(where: string, name: string): string {
  return `${where} ("${name}"): skip_redaction is refused: this deployment does not let tenants turn redaction off (registry.allow_tenant_skip_redaction in the config file); declare the tool in the config file, or ask the operator`;
}
