/** Every object key anywhere in `value`, once each. */
function collectKeys(value: unknown, keys: Set<string>): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) collectKeys(item, keys);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    keys.add(key);
    collectKeys(record[key], keys);
  }
}

/**
 * The same text built by hand, sorting each object's keys (the first implementation: idempotency
 * keys already stored were made with it). Used for values with `__proto__` keys (see below).
 */
export function sortedByHand(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(sortedByHand).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedByHand(record[k])}`).join(',')}}`;
}

/**
 * JSON text with object keys sorted at every depth, so that key order never changes a key
 * or a hash built from it. JSON.stringify with a list of keys writes every object's properties
 * in the list's order, so the sorted list of all keys found anywhere gives each object its keys
 * sorted, natively (the same text as sorting each object's keys and joining by hand). A listed key an
 * object lacks is read from its prototype: harmless for Object.prototype's methods (functions are
 * skipped) but not for `__proto__`, so values with that key are sorted by hand.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const keys = new Set<string>();
  collectKeys(value, keys);
  if (keys.has('__proto__')) return sortedByHand(value);
  return JSON.stringify(value, [...keys].sort()) ?? 'null';
}
