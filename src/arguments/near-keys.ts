import { isNearMiss } from './enum-near-miss';

/**
 * Longest name compared with a schema's properties, most properties read, and the most their
 * lengths may differ (separators and one typo): a near-miss test costs ~3-8 µs, and a refusal
 * names up to 5 unexpected properties.
 */
const MAX_NAME = 256;
const MAX_CANDIDATES = 200;
const MAX_LENGTH_GAP = 4;

/**
 * The one of `declared` (a schema's property names) that `name`, a property the schema does not
 * declare, is a misspelling of, and that `object` does not hold (`citty` for `city`, `countryCode`
 * for `country_code`): a near miss as enum-near-miss.ts reads one (one typo in one word, never its
 * first letter, or other separators; with `sideEffects`, only a doubled letter added or dropped).
 * None when no property or more than one is near.
 */
export function nearDeclared(name: string, declared: Iterable<string>, object: object, sideEffects = false): string | undefined {
  if (name.length > MAX_NAME) return undefined;
  let near: string | undefined;
  let read = 0;
  for (const candidate of declared) {
    if (++read > MAX_CANDIDATES) break;
    if (Math.abs(candidate.length - name.length) > MAX_LENGTH_GAP || Object.hasOwn(object, candidate) || !isNearMiss(name, candidate, sideEffects)) continue;
    if (near !== undefined) return undefined;
    near = candidate;
  }
  return near;
}

/**
 * Renames in `copy` (an object whose schema allows no properties beside `declared`) each property
 * the schema does not declare that is a near miss ({@link nearDeclared}) of exactly one declared
 * property it lacks, and no other such property is near the same one. Returns a line per rename.
 */
export function renameNearKeys(copy: Record<string, unknown>, declared: readonly string[], path: string, sideEffects: boolean): string[] {
  const known = new Set(declared);
  const meant = new Map<string, string[]>();
  for (const key of Object.keys(copy)) {
    if (known.has(key)) continue;
    const near = nearDeclared(key, declared, copy, sideEffects);
    if (near !== undefined) meant.set(near, [...(meant.get(near) ?? []), key]);
  }
  const lines: string[] = [];
  for (const [near, keys] of meant) {
    if (keys.length !== 1) continue;
    const key = keys[0]!;
    // Defined, not assigned: a schema may declare `__proto__`, whose assignment sets the prototype.
    Object.defineProperty(copy, near, { value: copy[key], enumerable: true, writable: true, configurable: true });
    delete copy[key];
    lines.push(`repaired ${path}/${key}: renamed to ${JSON.stringify(near)} (a misspelling of a property the schema declares)`);
  }
  return lines;
}
