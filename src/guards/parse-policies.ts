import { ConfigError } from '../config';
import { withEnv } from '../config/env-refs';
import { suggestKey, unknownKeyProblem } from '../config/unknown-key';
import { breakerSettingsFromYaml } from './breaker-settings';
import { flag, isRecord, onlyKeys, parseMatch, parseRule, positiveInteger, waitMs, type Fail } from './parse-rule';
import type { AfterRule, BreakerPolicy, BudgetPolicy, ConcurrencyPolicy, EndpointPolicy, PolicyConfig, PolicyRule, RatePolicy } from './policy-types';
import { parseRate } from './parse-rate';

/** Default time the policy endpoint may take, in ms. */
export const DEFAULT_ENDPOINT_TIMEOUT_MS = 2000;

const ENDPOINT_KEYS = new Set(['url', 'timeout_ms', 'fail_open', 'headers']);
const AFTER_KEYS = new Set(['warn', 'on', 'contains']);
const CONCURRENCY_KEYS = ['max_in_flight', 'max_in_flight_per_tenant', 'wait_ms', 'shared', 'fallback_max_in_flight', 'fail_closed'];
const KINDS = ['decide', 'endpoint', 'breaker', 'after', 'concurrency', 'rate', 'budget'] as const;

/** Where a policy entry is in its file, and the environment its `${NAME}` are read from (env-refs.ts). */
interface EnvAt {
  readonly file: string;
  readonly base: string;
  readonly env: NodeJS.ProcessEnv;
}

/**
 * The endpoint entry, `${NAME}` in its `url` and `headers` read from the environment as in an HTTP
 * tool's (a bearer token from a Secret, not the ConfigMap): before, they were sent as written.
 */
function parseEndpoint(raw: unknown, match: string[], fail: Fail, at: EnvAt): EndpointPolicy {
  if (!isRecord(raw)) fail('endpoint', 'must be a mapping with url, and optionally timeout_ms, fail_open and headers');
  onlyKeys(raw, [...ENDPOINT_KEYS], fail, 'endpoint.');
  const fromEnv = (value: string, path: string) => withEnv(value, at.file, `${at.base}.${path}`, at.env);
  const given = typeof raw.url === 'string' ? fromEnv(raw.url, 'endpoint.url') : raw.url;
  let url: URL | undefined;
  try {
    url = new URL(String(given));
  } catch {
    url = undefined;
  }
  // The URL shown is the file's: one read from the environment may carry a secret (a token in its query).
  if (typeof given !== 'string' || !url || (url.protocol !== 'http:' && url.protocol !== 'https:')) fail('endpoint.url', `must be an http or https URL, got ${JSON.stringify(raw.url)}`);
  const timeout = positiveInteger(raw.timeout_ms ?? DEFAULT_ENDPOINT_TIMEOUT_MS, 'endpoint.timeout_ms', fail);
  const failOpen = flag(raw.fail_open ?? false, 'endpoint.fail_open', fail);
  const written = raw.headers ?? {};
  if (!isRecord(written)) fail('endpoint.headers', 'must be a mapping of header name to value');
  // No prototype: a header named __proto__ stays an entry, refused below.
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(written)) {
    if (typeof value !== 'string') fail(`endpoint.headers.${name}`, 'must be a string');
    headers[name] = fromEnv(value, `endpoint.headers.${name}`);
  }
  // fetch (undici) drops a header named exactly __proto__, as for an HTTP tool (executors/http-headers.ts).
  if (Object.hasOwn(headers, '__proto__')) fail('endpoint.headers.__proto__', 'is never sent by the HTTP client (it drops a header of exactly that name); write it in another case, such as "__Proto__" (header names ignore case)');
  return { url: given, match, timeoutMs: timeout, failOpen, headers };
}

function parseAfter(raw: unknown, match: string[], fail: Fail): AfterRule {
  if (!isRecord(raw)) fail('after', 'must be a mapping with warn, and optionally on and contains');
  onlyKeys(raw, [...AFTER_KEYS], fail, 'after.');
  if (typeof raw.warn !== 'string' || raw.warn.trim() === '') fail('after.warn', 'must be the non-empty text added to the result');
  const on = raw.on ?? 'any';
  if (on !== 'any' && on !== 'error' && on !== 'success') fail('after.on', `must be any, error or success, got ${JSON.stringify(raw.on)}`);
  if (raw.contains !== undefined && (typeof raw.contains !== 'string' || raw.contains === '')) fail('after.contains', 'must be a non-empty string');
  return { match, on, warn: raw.warn, contains: raw.contains as string | undefined };
}

function parseConcurrency(raw: unknown, match: string[], fail: Fail): ConcurrencyPolicy {
  if (!isRecord(raw)) fail('concurrency', 'must be a mapping with max_in_flight, and optionally wait_ms, shared, fallback_max_in_flight and fail_closed');
  onlyKeys(raw, CONCURRENCY_KEYS, fail, 'concurrency.');
  // A share alone is refused: the tool's total is what protects it (tenants without one would
  // together run the share times their number), and a share is read as a part of that total.
  if (raw.max_in_flight === undefined && raw.max_in_flight_per_tenant !== undefined) fail('concurrency.max_in_flight', "is needed with max_in_flight_per_tenant: each tenant's share is a part of the tool's limit for all tenants together (write max_in_flight: N, N at least the share)");
  const max = positiveInteger(raw.max_in_flight, 'concurrency.max_in_flight', fail);
  const perTenant = raw.max_in_flight_per_tenant === undefined ? undefined : positiveInteger(raw.max_in_flight_per_tenant, 'concurrency.max_in_flight_per_tenant', fail);
  if (perTenant !== undefined && perTenant > max) fail('concurrency.max_in_flight_per_tenant', `must be at most max_in_flight (${max}), got ${perTenant}`);
  const wait = waitMs(raw.wait_ms ?? 0, 'concurrency.wait_ms', fail);
  const shared = flag(raw.shared ?? false, 'concurrency.shared', fail);
  const fallback = positiveInteger(raw.fallback_max_in_flight ?? max, 'concurrency.fallback_max_in_flight', fail);
  const failClosed = flag(raw.fail_closed ?? false, 'concurrency.fail_closed', fail);
  for (const key of ['fallback_max_in_flight', 'fail_closed']) {
    if (raw[key] !== undefined && !shared) fail(`concurrency.${key}`, 'applies to a shared cap only (shared: true): it says what holds while Redis fails');
  }
  if (raw.fallback_max_in_flight !== undefined && failClosed) fail('concurrency', 'has both fallback_max_in_flight and fail_closed: while Redis fails, calls either run under the fallback cap or are refused');
  return { match, maxInFlight: max, ...(perTenant !== undefined && { maxInFlightPerTenant: perTenant }), waitMs: wait, shared, fallbackMaxInFlight: fallback, failClosed };
}

function parseBudget(raw: unknown, match: string[], fail: Fail): BudgetPolicy {
  if (!isRecord(raw)) fail('budget', 'must be a mapping with max_calls_per_session');
  onlyKeys(raw, ['max_calls_per_session'], fail, 'budget.');
  return { match, maxCalls: positiveInteger(raw.max_calls_per_session, 'budget.max_calls_per_session', fail) };
}

/**
 * Checks the raw `policies:` list of a configuration file. Each entry holds exactly one of
 * `decide:` (a pre-tool rule), `endpoint:` (the external policy service, at most one), `breaker:`
 * (breaker settings), `after:` (a post-tool annotation), `concurrency:` (a cap on attempts running
 * at once), `rate:` (a limit on attempts started per second or minute) or `budget:` (calls per
 * session), plus `match:` globs on the tool name.
 * A problem is a ConfigError naming the file and the path, e.g. `policies[2].when[0].op`.
 * `${NAME}` in the endpoint's `url` and `headers` is read from `env` (env-refs.ts).
 */
export function parsePolicies(raw: readonly unknown[], file: string, env: NodeJS.ProcessEnv = process.env): PolicyConfig {
  const rules: PolicyRule[] = [];
  const breakers: BreakerPolicy[] = [];
  const after: AfterRule[] = [];
  const concurrency: ConcurrencyPolicy[] = [];
  const rates: RatePolicy[] = [];
  const budgets: BudgetPolicy[] = [];
  let endpoint: EndpointPolicy | undefined;
  raw.forEach((entry, index) => {
    const base = `policies[${index}]`;
    const fail: Fail = (path, problem) => {
      throw new ConfigError(file, path === '' ? base : `${base}.${path}`, problem);
    };
    if (!isRecord(entry)) fail('', 'must be a mapping');
    const kinds = KINDS.filter((k) => entry[k] !== undefined);
    // A misspelt kind (`rat:`) is named with the one meant, not as a missing kind.
    const misspelt = kinds.length === 0 ? Object.keys(entry).find((key) => suggestKey(key, KINDS) !== undefined) : undefined;
    if (misspelt !== undefined) fail(misspelt, unknownKeyProblem(misspelt, KINDS));
    if (kinds.length !== 1) {
      const held = Object.keys(entry).slice(0, 8).map((key) => JSON.stringify(key.slice(0, 64))).join(', ');
      fail('', kinds.length === 0 ? `needs one of decide (a rule), endpoint, breaker, after, concurrency, rate or budget${held ? `; it holds ${held}` : ''}` : `holds both ${kinds.join(' and ')}; put each in its own entry`);
    }
    const kind = kinds[0]!;
    if (kind === 'decide') {
      rules.push(parseRule(entry, base, fail));
      return;
    }
    onlyKeys(entry, ['match', kind], fail);
    const match = parseMatch(entry.match, fail);
    if (kind === 'endpoint') {
      if (endpoint) fail('endpoint', 'only one policy endpoint may be configured');
      endpoint = parseEndpoint(entry.endpoint, match, fail, { file, base, env });
    } else if (kind === 'breaker') {
      const settings = breakerSettingsFromYaml(entry.breaker);
      if ('problem' in settings) fail(settings.path ? `breaker.${settings.path}` : 'breaker', settings.problem);
      breakers.push({ match, settings });
    } else if (kind === 'concurrency') concurrency.push(parseConcurrency(entry.concurrency, match, fail));
    else if (kind === 'rate') rates.push(parseRate(entry.rate, match, fail));
    else if (kind === 'budget') budgets.push(parseBudget(entry.budget, match, fail));
    else after.push(parseAfter(entry.after, match, fail));
  });
  return { rules, endpoint, breakers, after, concurrency, rates, budgets };
}
