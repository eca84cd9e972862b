import { readFileSync } from 'node:fs';
import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { DEFAULT_LIMITS, resolveLimits, type Limits } from '../options';
import { tenantProblem } from '../parse/client-id';
import { resolveSpillLimits, type SpillLimits } from '../store/redis/spill-limits';
import { ConfigError } from './config-error';
import { toolWithEnv } from './env-refs';
import { parseRedactionConfig, type RedactionConfig } from './redaction-config';
import { parseRegistryConfig, type RegistryConfig } from './registry-config';
import { toolFromYaml } from './tool-yaml';
import { snake, unknownKeyProblem } from './unknown-key';
import { yamlValue } from './yaml-value';

/** A bearer token's entry: the tenant and scopes it grants, and the SHA-256 of the token. */
export interface TokenEntry {
  readonly tenant: string;
  readonly scopes: readonly string[];
  readonly sha256: string;
}

/** Which field of a client certificate's subject names the tenant under mutual TLS. */
export type MtlsTenantField = 'cn' | 'o' | 'ou';

/** The `auth:` section: bearer tokens (inline or in a file), and tenants from client certificates. */
export interface AuthConfig {
  readonly tokens: readonly TokenEntry[];
  readonly tokensFile?: string;
  /** When set, a verified client certificate's subject field names the caller's tenant. */
  readonly mtlsTenantFrom?: MtlsTenantField;
  /** Scopes of a caller known by its certificate alone. @default ['dispatch', 'subscribe'] */
  readonly mtlsScopes?: readonly string[];
  /** The file has an `auth:` section (the auth plugin refuses one that turns nothing on). */
  readonly written?: boolean;
}

/** The parsed configuration file. Sections other than tools and limits are checked by their owners. */
export interface DispatchConfig {
  readonly file: string;
  readonly tools: readonly ToolSpec[];
  /** The limits; a per-tenant share left out is its fraction of the limit on all tenants together. */
  readonly limits: Limits;
  /**
   * The limits for a replica with no authentication configured, where every caller is tenant
   * `default`: a per-tenant share left out is its whole limit (resolveLimits' singleTenant).
   * buildApp uses them then. Absent (a config built by hand): `limits`.
   */
  readonly singleTenantLimits?: Limits;
  readonly auth: AuthConfig;
  readonly policies: readonly unknown[];
  readonly mcpServers: readonly unknown[];
  readonly telemetry: Readonly<Record<string, unknown>>;
  /** `registry: { http_allow, http_deny, allow_tenant_skip_redaction }`: what the operator lets tenants register. */
  readonly registry: RegistryConfig;
  /**
   * `redaction: { thread_timeout_ms, thread_idle_ms, thread_heap_mb, late_jobs_max_chars }`: the bounds of the thread
   * that redacts large outputs (RedactionWorkerOptions). Absent (a config built by hand), or a key
   * left out: the worker's defaults.
   */
  readonly redaction?: RedactionConfig;
  /** `redis: { url }`: the shared store, when no `--redis` flag or DISPATCH_REDIS_URL is given. */
  readonly redisUrl?: string;
  /** `redis: { spill_memory_share, max_spill_bytes, max_spill_ttl_seconds }`: what spilled results may take of Redis. */
  readonly redisSpill: SpillLimits;
}

/** The sections of the config file. */
export const TOP_LEVEL: readonly string[] = ['tools', 'limits', 'auth', 'policies', 'mcp_servers', 'telemetry', 'redis', 'registry', 'redaction'];
const AUTH_KEYS = ['tokens', 'tokens_file', 'mtls_tenant_from', 'mtls_scopes'];
const TOKEN_KEYS = ['tenant', 'sha256', 'scopes'];
const SCOPES = ['dispatch', 'subscribe', 'admin', 'worker'];

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
/** The `limits:` keys as the file spells them (`max_calls_per_turn`). */
const LIMIT_KEYS = Object.keys(DEFAULT_LIMITS).map(snake);

function asList(file: string, path: string, value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ConfigError(file, path, 'must be a list');
  return value;
}

function parseAuth(file: string, raw: unknown): DispatchConfig['auth'] {
  if (raw === undefined || raw === null) return { tokens: [] };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(file, 'auth', 'must be a mapping');
  const { tokens, tokens_file: tokensFile, mtls_tenant_from: mtlsTenantFrom, mtls_scopes: mtlsScopes, ...rest } = raw as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown) throw new ConfigError(file, `auth.${unknown}`, unknownKeyProblem(unknown, AUTH_KEYS));
  if (tokensFile !== undefined && typeof tokensFile !== 'string') throw new ConfigError(file, 'auth.tokens_file', 'must be a path');
  if (mtlsTenantFrom !== undefined && mtlsTenantFrom !== 'cn' && mtlsTenantFrom !== 'o' && mtlsTenantFrom !== 'ou') throw new ConfigError(file, 'auth.mtls_tenant_from', 'must be cn, o or ou');
  const auth: AuthConfig = { tokens: parseTokens(file, 'auth.tokens', tokens), tokensFile, mtlsTenantFrom: mtlsTenantFrom as MtlsTenantField | undefined, written: true };
  if (mtlsScopes === undefined) return auth;
  return { ...auth, mtlsScopes: parseScopes(file, 'auth.mtls_scopes', mtlsScopes) };
}

/** Token entries from a YAML list, checked field by field. */
export function parseTokens(file: string, path: string, raw: unknown): TokenEntry[] {
  return asList(file, path, raw).map((entry, i) => {
    const where = `${path}[${i}]`;
    const e = entry as Record<string, unknown>;
    if (typeof e?.tenant !== 'string' || e.tenant === '') throw new ConfigError(file, `${where}.tenant`, 'must be a non-empty string');
    // Local keys join a tenant and a session with NUL: "a\0b" + "s" must not name "a" + "b\0s". And a
    // tenant is shown in logs, events and dispatchctl lines: the rule of client ids (no control or
    // invisible format character, 256 characters at most) keeps it from hiding or faking text there.
    const problem = tenantProblem(e.tenant);
    if (problem !== undefined) throw new ConfigError(file, `${where}.tenant`, problem);
    // A misspelt key (`scope:`) would leave a token that can do nothing, or less than meant.
    const unknown = Object.keys(e).find((key) => !TOKEN_KEYS.includes(key));
    if (unknown) throw new ConfigError(file, `${where}.${unknown}`, unknownKeyProblem(unknown, TOKEN_KEYS));
    if (typeof e.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(e.sha256)) throw new ConfigError(file, `${where}.sha256`, 'must be the lowercase hex SHA-256 of the token (64 characters)');
    // Without scopes the token loaded and could do nothing: every call PERMISSION_DENIED.
    const scopes = parseScopes(file, `${where}.scopes`, e.scopes);
    if (scopes.length === 0) throw new ConfigError(file, `${where}.scopes`, `must list the token's scopes (one or more of ${SCOPES.join(', ')}): without any it can call nothing`);
    return { tenant: e.tenant, sha256: e.sha256, scopes };
  });
}

function parseScopes(file: string, path: string, raw: unknown): string[] {
  const scopes = asList(file, path, raw);
  for (const [j, s] of scopes.entries()) {
    if (!SCOPES.includes(s as string)) throw new ConfigError(file, `${path}[${j}]`, `unknown scope ${JSON.stringify(s)} (dispatch, subscribe, admin or worker)`);
  }
  return scopes as string[];
}

/** The `redis:` section's keys for spilled results, by their SpillLimits names. */
const SPILL_KEYS: Readonly<Record<string, keyof SpillLimits>> = { spill_memory_share: 'spillMemoryShare', max_spill_bytes: 'maxSpillBytes', max_spill_ttl_seconds: 'maxSpillTtlSeconds' };

function parseRedis(file: string, raw: unknown): { url?: string; spill: SpillLimits } {
  if (raw === undefined || raw === null) return { spill: {} };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(file, 'redis', 'must be a mapping with a url');
  const { url, ...rest } = raw as Record<string, unknown>;
  const spill: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    const name = Object.hasOwn(SPILL_KEYS, key) ? SPILL_KEYS[key] : undefined;
    if (!name) throw new ConfigError(file, `redis.${key}`, unknownKeyProblem(key, ['url', ...Object.keys(SPILL_KEYS)], 'the mode is chosen by the url: redis://, rediss://, redis-sentinel://, redis-cluster://'));
    spill[name] = value;
  }
  // The url may come from --redis or DISPATCH_REDIS_URL instead, with the spill settings here.
  if (url !== undefined && (typeof url !== 'string' || url === '')) throw new ConfigError(file, 'redis.url', 'must be a Redis URL');
  if (url === undefined && Object.keys(spill).length === 0) throw new ConfigError(file, 'redis.url', 'must be a Redis URL');
  try {
    resolveSpillLimits(spill as SpillLimits);
  } catch (error) {
    const [name, problem] = (error as Error).message.split(/ (.*)/s);
    const key = Object.keys(SPILL_KEYS).find((k) => SPILL_KEYS[k] === name) ?? name!;
    throw new ConfigError(file, `redis.${key}`, problem ?? '');
  }
  return { url: url as string | undefined, spill: spill as SpillLimits };
}

/**
 * The `tools:` list, `${NAME}` in an HTTP tool's url and headers read from the environment
 * (env-refs.ts). A name given twice is refused here, naming both entries: the registry would
 * refuse it too, but in the words of a RegisterTools request ("in one request").
 */
export function parseTools(file: string, raw: unknown): ToolSpec[] {
  const first = new Map<string, number>();
  return asList(file, 'tools', raw).map((entry, i) => {
    const parsed = toolFromYaml(toolWithEnv(entry, file, `tools[${i}]`));
    if (!('spec' in parsed)) throw new ConfigError(file, `tools[${i}]${parsed.path ? `.${parsed.path}` : ''}`, parsed.problem);
    const earlier = first.get(parsed.spec.name);
    if (earlier !== undefined && parsed.spec.name !== '') throw new ConfigError(file, `tools[${i}].name`, `tool ${JSON.stringify(parsed.spec.name)} is already defined by tools[${earlier}]; each tool name appears once`);
    first.set(parsed.spec.name, i);
    return parsed.spec;
  });
}

/** Parses configuration text; `file` names it in errors. */
export function parseConfig(text: string, file: string): DispatchConfig {
  const root = (yamlValue(text, file) ?? {}) as unknown;
  if (typeof root !== 'object' || Array.isArray(root)) throw new ConfigError(file, '', 'the file must be a YAML mapping');
  const top = root as Record<string, unknown>;
  for (const key of Object.keys(top)) {
    if (!TOP_LEVEL.includes(key)) throw new ConfigError(file, key, unknownKeyProblem(key, TOP_LEVEL));
  }
  const tools = parseTools(file, top.tools);
  const rawLimits = top.limits ?? {};
  if (typeof rawLimits !== 'object' || Array.isArray(rawLimits)) throw new ConfigError(file, 'limits', 'must be a mapping');
  let limits: Limits;
  let singleTenantLimits: Limits;
  const stray = Object.keys(rawLimits).find((key) => !Object.hasOwn(DEFAULT_LIMITS, camel(key)));
  if (stray !== undefined) throw new ConfigError(file, `limits.${stray}`, unknownKeyProblem(stray, LIMIT_KEYS));
  // Both spellings of one limit are two YAML keys, past the duplicate-key check: the later won silently.
  const seen = new Map<string, string>();
  for (const key of Object.keys(rawLimits)) {
    const earlier = seen.get(camel(key));
    if (earlier !== undefined) throw new ConfigError(file, `limits.${key}`, `the limit ${snake(camel(key))} is already given as ${earlier}; give it once`);
    seen.set(camel(key), key);
  }
  try {
    const given = Object.fromEntries(Object.entries(rawLimits as object).map(([k, v]) => [camel(k), v]));
    limits = resolveLimits(given);
    singleTenantLimits = resolveLimits(given, { singleTenant: true });
  } catch (error) {
    // Named as the file spells it: `limits.max_calls_per_turn: must be ...`, not maxCallsPerTurn.
    const [, name, problem] = /^limits\.(\S+) (.*)$/s.exec((error as Error).message) ?? [];
    const key = Object.keys(rawLimits as object).find((k) => camel(k) === name) ?? name;
    throw new ConfigError(file, key === undefined ? 'limits' : `limits.${key}`, problem ?? (error as Error).message);
  }
  const redis = parseRedis(file, top.redis);
  return {
    file,
    tools,
    limits,
    singleTenantLimits,
    redisUrl: redis.url,
    redisSpill: redis.spill,
    auth: parseAuth(file, top.auth),
    policies: asList(file, 'policies', top.policies),
    mcpServers: asList(file, 'mcp_servers', top.mcp_servers),
    telemetry: (top.telemetry ?? {}) as Record<string, unknown>,
    registry: parseRegistryConfig(file, top.registry),
    redaction: parseRedactionConfig(file, top.redaction),
  };
}

/** Reads and parses a configuration file. */
export function loadConfig(file: string): DispatchConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(file, '', `cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return parseConfig(text, file);
}
