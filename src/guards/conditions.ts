import { canonicalJson, readPointer } from '../json';
import { globMatch } from './glob';
import type { Condition } from './policy-types';

const NUMERIC = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const MAX_NUMERIC_CHARS = 64;

/**
 * A number, or a string that spells one: a rule like `amount > 1000` must not be bypassed by
 * sending `"5000"` to a tool without a schema.
 */
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.length > MAX_NUMERIC_CHARS) return undefined;
  const trimmed = value.trim();
  return NUMERIC.test(trimmed) ? Number(trimmed) : undefined;
}

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

/**
 * True when `condition` holds for `args`. A missing value satisfies only `exists: false` and `!=`;
 * comparisons need numbers (or numeric strings); `=` and `in` compare JSON values whatever their key
 * order; `matches` is a glob over a string value.
 */
export function conditionHolds(condition: Condition, args: unknown): boolean {
  const actual = readPointer(args, condition.pointer);
  switch (condition.op) {
    case 'exists':
      return (actual !== undefined) === condition.value;
    case '=':
      return actual !== undefined && same(actual, condition.value);
    case '!=':
      return actual === undefined || !same(actual, condition.value);
    case 'in':
      return actual !== undefined && (condition.value as readonly unknown[]).some((v) => same(actual, v));
    case 'matches':
      return typeof actual === 'string' && globMatch(condition.value as string, actual);
    default: {
      const n = asNumber(actual);
      const limit = condition.value as number;
      if (n === undefined) return false;
      if (condition.op === '>') return n > limit;
      if (condition.op === '>=') return n >= limit;
      if (condition.op === '<') return n < limit;
      return n <= limit;
    }
  }
}

/** True when every condition holds. */
export function allHold(conditions: readonly Condition[], args: unknown): boolean {
  for (const condition of conditions) if (!conditionHolds(condition, args)) return false;
  return true;
}
