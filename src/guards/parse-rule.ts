import { unknownKeyProblem } from '../config/unknown-key';
import { isJsonPointer } from '../json';
import { MAX_TIMER_MS } from '../options/limits';
import { CONDITION_OPS, type Condition, type ConditionOp, type PolicyRule, type RuleDecision } from './policy-types';

/** Throws a configuration problem at `path` (relative to the policy entry). */
export type Fail = (path: string, problem: string) => never;

/** The Fail of a reading of policies parsePolicies checked before (start-up warnings): never called. */
export const CHECKED_BEFORE: Fail = () => {
  throw new Error('policies are checked before their warnings');
};

const DECISIONS: readonly RuleDecision[] = ['allow', 'block', 'ask', 'modify'];
const RULE_KEYS = ['name', 'match', 'when', 'decide', 'reason', 'set', 'remove'];
const CONDITION_KEYS = ['pointer', 'op', 'value'];

export const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What a `*_ms` key above {@link MAX_TIMER_MS} is told: Node would fire its timer after 1 ms. */
export const timerTooLong = (value: number) => `must be at most ${MAX_TIMER_MS} (milliseconds; Node runs longer timers at once), got ${value}`;

/**
 * `value` (the key's value, or its default) as a positive integer, at most MAX_TIMER_MS when
 * `path` is a `*_ms` key (a timer); else fails at `path`.
 */
export function positiveInteger(value: unknown, path: string, fail: Fail): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) fail(path, `must be a positive integer, got ${JSON.stringify(value)}`);
  if (path.endsWith('_ms') && value > MAX_TIMER_MS) fail(path, timerTooLong(value));
  return value;
}

/** `value` as a wait in milliseconds, a non-negative integer at most MAX_TIMER_MS; else fails at `path`. */
export function waitMs(value: unknown, path: string, fail: Fail): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) fail(path, `must be a non-negative integer (milliseconds), got ${JSON.stringify(value)}`);
  if (value > MAX_TIMER_MS) fail(path, timerTooLong(value));
  return value;
}

/** `value` as a boolean; else fails at `path`. */
export function flag(value: unknown, path: string, fail: Fail): boolean {
  if (typeof value !== 'boolean') fail(path, `must be true or false, got ${JSON.stringify(value)}`);
  return value;
}

/** Fails on the first key of `raw` not in `allowed`, naming it under `prefix`. */
export function onlyKeys(raw: Record<string, unknown>, allowed: readonly string[], fail: Fail, prefix = ''): void {
  for (const key of Object.keys(raw)) if (!allowed.includes(key)) fail(`${prefix}${key}`, unknownKeyProblem(key, allowed));
}

/** A `match:` value: one glob or a list of them; every tool when absent. */
export function parseMatch(raw: unknown, fail: Fail): string[] {
  if (raw === undefined) return ['*'];
  const list = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(list) || list.length === 0) fail('match', 'must be a tool-name glob or a non-empty list of them');
  return list.map((glob, i) => {
    if (typeof glob !== 'string' || glob === '') fail(Array.isArray(raw) ? `match[${i}]` : 'match', `must be a non-empty glob, got ${JSON.stringify(glob)}`);
    return glob;
  });
}

function parsePointer(raw: unknown, path: string, fail: Fail, allowRoot: boolean): string {
  if (typeof raw !== 'string' || !isJsonPointer(raw) || (!allowRoot && raw === '')) {
    fail(path, `must be a JSON pointer such as "/amount", got ${JSON.stringify(raw)}`);
  }
  return raw;
}

function parseCondition(raw: unknown, path: string, fail: Fail): Condition {
  if (!isRecord(raw)) fail(path, 'must be a mapping with pointer, op and value');
  onlyKeys(raw, CONDITION_KEYS, fail, `${path}.`);
  const pointer = parsePointer(raw.pointer, `${path}.pointer`, fail, true);
  const op = raw.op as ConditionOp;
  if (!CONDITION_OPS.includes(op)) fail(`${path}.op`, `must be one of ${CONDITION_OPS.join(' ')}, got ${JSON.stringify(raw.op)}`);
  const value = raw.value;
  const where = `${path}.value`;
  if (op === 'exists') {
    if (value !== undefined && typeof value !== 'boolean') fail(where, `must be true or false for exists, got ${JSON.stringify(value)}`);
    return { pointer, op, value: value ?? true };
  }
  if (value === undefined) fail(where, `is required for ${op}`);
  if ((op === '>' || op === '>=' || op === '<' || op === '<=') && (typeof value !== 'number' || !Number.isFinite(value))) {
    fail(where, `must be a number for ${op}, got ${JSON.stringify(value)}`);
  }
  if (op === 'in' && !Array.isArray(value)) fail(where, `must be a list for in, got ${JSON.stringify(value)}`);
  if (op === 'matches' && typeof value !== 'string') fail(where, `must be a glob string for matches, got ${JSON.stringify(value)}`);
  return { pointer, op, value };
}

/** A pre-tool rule entry (`decide:`) of the policies list. */
export function parseRule(raw: Record<string, unknown>, label: string, fail: Fail): PolicyRule {
  onlyKeys(raw, RULE_KEYS, fail);
  const decide = raw.decide as RuleDecision;
  if (!DECISIONS.includes(decide)) fail('decide', `must be one of ${DECISIONS.join(', ')}, got ${JSON.stringify(raw.decide)}`);
  if (raw.name !== undefined && (typeof raw.name !== 'string' || raw.name === '')) fail('name', 'must be a non-empty string');
  if (raw.reason !== undefined && typeof raw.reason !== 'string') fail('reason', 'must be a string');
  const reason = (raw.reason as string | undefined) ?? '';
  if ((decide === 'block' || decide === 'ask') && reason.trim() === '') fail('reason', `a ${decide} rule needs a reason: the model (or the approver) reads it`);
  const when = raw.when === undefined ? [] : raw.when;
  if (!Array.isArray(when)) fail('when', 'must be a list of conditions');
  if (decide !== 'modify' && (raw.set !== undefined || raw.remove !== undefined)) fail(raw.set !== undefined ? 'set' : 'remove', 'only a modify rule may set or remove arguments');
  if (raw.set !== undefined && !isRecord(raw.set)) fail('set', 'must be a mapping of JSON pointer to value');
  const set = Object.entries((raw.set ?? {}) as Record<string, unknown>).map(([pointer, value]) => [parsePointer(pointer, `set.${pointer}`, fail, false), value] as const);
  const removeRaw = raw.remove ?? [];
  if (!Array.isArray(removeRaw)) fail('remove', 'must be a list of JSON pointers');
  const remove = removeRaw.map((p, i) => parsePointer(p, `remove[${i}]`, fail, false));
  if (decide === 'modify' && set.length === 0 && remove.length === 0) fail('decide', 'a modify rule needs set or remove');
  return {
    label: typeof raw.name === 'string' ? raw.name : label,
    match: parseMatch(raw.match, fail),
    when: when.map((c, i) => parseCondition(c, `when[${i}]`, fail)),
    decide,
    reason,
    set,
    remove,
  };
}
