import { levenshtein } from '../json';
import { inexactNumber } from './exact-numbers';

type Schema = Record<string, unknown>;

const typesOf = (schema: Schema): string[] =>
  typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? (schema.type as string[]) : [];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'null':
      return value === null;
    default:
      return typeof value === type;
  }
}

const DECIMAL = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The candidate values a mismatching scalar could be repaired to, with what each repair is. */
function candidates(value: unknown, schema: Schema): { value: unknown; what: string }[] {
  const types = typesOf(schema);
  const out: { value: unknown; what: string }[] = [];
  if (typeof value === 'string') {
    const trimmed = value.trim();
    // A decimal number only ("0x10", "0b1", "Infinity" and "" are not), and one a double keeps exactly.
    if ((types.includes('number') || types.includes('integer')) && DECIMAL.test(trimmed) && inexactNumber(trimmed) === undefined) {
      const n = Number(trimmed);
      if (Number.isFinite(n) && (types.includes('number') || Number.isInteger(n))) out.push({ value: n, what: 'string to number' });
    }
    if (types.includes('boolean') && /^(true|false)$/i.test(trimmed)) {
      out.push({ value: trimmed.toLowerCase() === 'true', what: 'string to boolean' });
    }
    if ((types.includes('object') || types.includes('array')) && /^[[{]/.test(trimmed)) {
      try {
        const decoded: unknown = JSON.parse(trimmed);
        if (types.some((t) => matchesType(decoded, t))) out.push({ value: decoded, what: 'JSON text decoded' });
      } catch {
        // not JSON: no candidate
      }
    }
    if (Array.isArray(schema.enum)) {
      const allowed = (schema.enum as unknown[]).filter((e): e is string => typeof e === 'string');
      const lower = allowed.filter((e) => e.toLowerCase() === value.toLowerCase());
      const near = lower.length > 0 ? lower : allowed.filter((e) => isNearMiss(value, e));
      out.push(...near.map((e) => ({ value: e, what: 'enum value corrected' })));
    }
  }
  if (types.includes('array') && !Array.isArray(value) && out.length === 0) {
    out.push({ value: [value], what: 'bare value wrapped in an array' });
  }
  return out;
}

/**
 * The edits a misspelt enum value may be from an allowed one, by the length of the shorter of the
 * two: none below 3 characters, 1 below 6, then 2. Always less than half the word, so a short
 * word is never turned into another word ("on" is not "no", "ok" not "no", "on" not "off").
 */
function enumEditAllowance(length: number): number {
  return length < 3 ? 0 : length < 6 ? 1 : 2;
}

/** Whether `value` is a misspelling of `allowed`, case-insensitively (see `enumEditAllowance`). */
function isNearMiss(value: string, allowed: string): boolean {
  const max = enumEditAllowance(Math.min(value.length, allowed.length));
  return max > 0 && levenshtein(allowed.toLowerCase(), value.toLowerCase(), max) <= max;
}

function valueFits(value: unknown, schema: Schema): boolean {
  const types = typesOf(schema);
  if (types.length > 0 && !types.some((t) => matchesType(value, t))) return false;
  return !Array.isArray(schema.enum) || (schema.enum as unknown[]).some((e) => e === value);
}

/**
 * Repairs arguments against a schema, as a lenient tool opts in to: string to number, integer or
 * boolean; bare value to a one-element array; JSON text to an object; an enum value that differs
 * from exactly one allowed value in case only, or else is within `enumEditAllowance` edits of
 * exactly one (so strictly closer to it than to any other; stricter than "Levenshtein 2", which
 * turned "on" into "no"); `null` for an optional field dropped. Only values that do not fit are
 * touched, and a value with more than one possible repair is left as it is, so a repair never
 * turns an invalid call into a different valid one. Returns the repaired copy and one line per
 * repair.
 */
export function repairArguments(value: unknown, schema: Schema): { value: unknown; repairs: string[] } {
  const repairs: string[] = [];
  const walk = (current: unknown, sub: Schema, path: string, depth: number): unknown => {
    if (depth > 32) return current;
    let next = current;
    if (!valueFits(next, sub)) {
      const options = candidates(next, sub);
      if (options.length === 1) {
        repairs.push(`repaired ${path || '/'}: ${JSON.stringify(next)} -> ${JSON.stringify(options[0]!.value)} (${options[0]!.what})`);
        next = options[0]!.value;
      }
    }
    if (isObject(next) && isObject(sub.properties)) {
      const props = sub.properties as Record<string, Schema>;
      const required = new Set(Array.isArray(sub.required) ? (sub.required as string[]) : []);
      const copy: Record<string, unknown> = { ...next };
      for (const [key, propSchema] of Object.entries(props)) {
        if (!(key in copy) || !isObject(propSchema)) continue;
        if (copy[key] === null && !required.has(key) && !valueFits(null, propSchema)) {
          delete copy[key];
          repairs.push(`repaired ${path}/${key}: null dropped (optional field)`);
          continue;
        }
        copy[key] = walk(copy[key], propSchema, `${path}/${key}`, depth + 1);
      }
      return copy;
    }
    if (Array.isArray(next) && isObject(sub.items)) {
      return next.map((item, i) => walk(item, sub.items as Schema, `${path}/${i}`, depth + 1));
    }
    return next;
  };
  return { value: walk(value, schema, '', 0), repairs };
}

/**
 * The defaults validation will fill in (properties absent from the arguments whose schema has a
 * `default`), as warning lines, so a lenient tool's defaults are never applied silently.
 */
export function defaultsToApply(value: unknown, schema: Schema, path = '', depth = 0): string[] {
  if (depth > 32 || !isObject(value) || !isObject(schema.properties)) return [];
  const lines: string[] = [];
  for (const [key, sub] of Object.entries(schema.properties as Record<string, unknown>)) {
    if (!isObject(sub)) continue;
    if (!Object.hasOwn(value, key)) {
      if (Object.hasOwn(sub, 'default')) lines.push(`applied default ${path}/${key}: ${JSON.stringify(sub.default)}`);
    } else lines.push(...defaultsToApply(value[key], sub, `${path}/${key}`, depth + 1));
  }
  return lines;
}
