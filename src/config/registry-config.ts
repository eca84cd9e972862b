import { createDestinationPolicy, type DestinationRules } from '../registry';
import { ConfigError } from './config-error';

const KEYS = ['http_allow', 'http_deny'] as const;

/**
 * Parses the `registry:` section, `{ http_allow: [...], http_deny: [...] }`: the destinations the
 * HTTP tools of tenants may point at. Each entry is compiled here, so a bad one stops the start.
 */
export function parseRegistryConfig(file: string, raw: unknown): DestinationRules {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(file, 'registry', 'must be a mapping');
  const section = raw as Record<string, unknown>;
  const unknown = Object.keys(section).find((key) => !(KEYS as readonly string[]).includes(key));
  if (unknown) throw new ConfigError(file, `registry.${unknown}`, `unknown key (${KEYS.join(', ')})`);
  for (const key of KEYS) {
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
  return rules;
}
