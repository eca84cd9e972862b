import { flag, isRecord, onlyKeys, positiveInteger, waitMs, type Fail } from './parse-rule';
import type { RatePolicy } from './policy-types';

const RATE_KEYS = ['per_second', 'per_minute', 'burst', 'wait_ms', 'shared', 'per_tenant'];
/** The fastest rate a limit may name: beyond it, the limit would say nothing a replica could do. */
const MAX_PER_SECOND = 1_000_000;

/** A `rate:` policy: `per_second` or `per_minute`, and optionally `burst`, `wait_ms`, `shared` and `per_tenant`. */
export function parseRate(raw: unknown, match: string[], fail: Fail): RatePolicy {
  if (!isRecord(raw)) fail('rate', 'must be a mapping with per_second or per_minute, and optionally burst, wait_ms and shared');
  onlyKeys(raw, RATE_KEYS, fail, 'rate.');
  const given = (['per_second', 'per_minute'] as const).filter((k) => raw[k] !== undefined);
  if (given.length !== 1) fail('rate', given.length === 0 ? 'needs per_second or per_minute' : 'has both per_second and per_minute; give one');
  const unit = given[0]!;
  const value = raw[unit];
  const perSecond = typeof value === 'number' ? (unit === 'per_second' ? value : value / 60) : NaN;
  if (!(perSecond > 0 && perSecond <= MAX_PER_SECOND)) fail(`rate.${unit}`, `must be a positive number of calls, at most ${MAX_PER_SECOND} per second, got ${JSON.stringify(value)}`);
  const burst = positiveInteger(raw.burst ?? Math.max(1, Math.ceil(perSecond)), 'rate.burst', fail);
  const wait = waitMs(raw.wait_ms ?? 0, 'rate.wait_ms', fail);
  const shared = flag(raw.shared ?? false, 'rate.shared', fail);
  const perTenant = flag(raw.per_tenant ?? false, 'rate.per_tenant', fail);
  const calls = value as number;
  const text = `${calls} call${calls === 1 ? '' : 's'} per ${unit === 'per_second' ? 'second' : 'minute'}`;
  return { match, perSecond, burst, waitMs: wait, shared, ...(perTenant && { perTenant }), text };
}
