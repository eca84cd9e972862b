import { createDestinationPolicy, type DestinationRules } from '../registry';
import { ConfigError } from './config-error';
import { unknownKeyProblem } from './unknown-key';

const KEYS = ['http_allow', 'http_deny', 'allow_tenant_skip_redaction', 'allow_tenant_mcp'] as const;
const LISTS = ['http_allow', 'http_deny'] as const;

/** The `registry:` section: what the operator lets tenants register. */
export interface RegistryConfig extends DestinationRules {
  /** `allow_tenant_skip_redaction`: whether a tenant's tool may declare skip_redaction. @default false */
  readonly allowTenantSkipRedaction?: boolean;
  /** `allow_tenant_mcp`: whether a tenant's tool may name one of the MCP servers as its executor. @default false */
  readonly allowTenantMcp?: boolean;
}

/**
 * Parses the `registry:` section, `{ http_allow: [...], http_deny: [...], allow_tenant_skip_redaction,
 * allow_tenant_mcp }`: the destinations the HTTP tools of tenants may point at, whether their tools
 * may turn redaction off, and whether they may name the MCP servers. Each entry is compiled here, so a bad one stops the start.
 */
export function parseRegistryConfig(file: string, raw: unknown): RegistryConfig {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(file, 'registry', 'must be a mapping');
  const section = raw as Record<string, unknown>;
  const unknown = Object.keys(section).find((key) => !(KEYS as readonly string[]).includes(key));
  if (unknown) throw new ConfigError(file, `registry.${unknown}`, unknownKeyProblem(unknown, KEYS));
  const skip = flag(file, section, 'allow_tenant_skip_redaction');
  const mcp = flag(file, section, 'allow_tenant_mcp');
  for (const key of LISTS) {
    const value = section[key];
    if (value !== undefined && value !== null && !Array.isArray(value)) throw new ConfigError(file, `registry.${key}`, 'must be a list');
  }
  const rules: DestinationRules = { httpAllow: (section.http_allow ?? []) as string[], httpDeny: (section.http_deny ?? []) as string[] };
  try {
    createDestinationPolicy(rules);
  } catch (error) {
    const [path, ...problem] = (error as Error).message.split(': ');
    throw new ConfigError(file, path!, problem.join(': '));
  }
  return { ...rules, ...(skip === undefined ? {} : { allowTenantSkipRedaction: skip }), ...(mcp === undefined ? {} : { allowTenantMcp: mcp }) };
}

/** A `registry:` key that is true or false, if set. */
function flag(file: string, section: Record<string, unknown>, key: string): boolean | undefined {
  const value = section[key];
  if (value !== undefined && typeof value !== 'boolean') throw new ConfigError(file, `registry.${key}`, 'must be true or false');
  return value;
}
