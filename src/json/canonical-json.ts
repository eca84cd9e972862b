/** Marks a value that {@link sortedCopy} cannot order: it has a key that enumerates out of order. */
const UNORDERABLE: unique symbol = Symbol('unorderable');

/**
 * True for a key that cannot be made to enumerate in sorted order: an array index ("2", "10"),
 * which objects enumerate first, in numeric order, whatever the insertion order; and `__proto__`,
 * whose assignment sets the prototype instead of adding a key.
 */
function unorderable(key: string): boolean {
  const first = key.charCodeAt(0);
  if (first >= 0x30 && first <= 0x39) return /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 2 ** 32 - 1;
  return key === '__proto__';
}

/** Keys up to this many are sorted by insertion, in place (Array#sort allocates a work array). */
const FEW_KEYS = 32;

/** Sorts keys by code units, in place. */
function sortKeys(keys: string[]): void {
  if (keys.length > FEW_KEYS) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
}

/**
 * `value` with every object's keys in sorted (code unit) order: the value itself where they
 * already are, else copies (the parts already sorted are shared). UNORDERABLE when an object has
 * a key that cannot be ordered (see {@link unorderable}).
 */
function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const sorted = sortedCopy(item);
      if (sorted === UNORDERABLE) return UNORDERABLE;
      if (sorted !== item) (copy ??= value.slice())[i] = sorted;
    }
    return copy ?? value;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  let inOrder = true;
  for (let i = 0; i < keys.length; i++) {
    if (unorderable(keys[i]!)) return UNORDERABLE;
    if (i > 0 && keys[i - 1]! > keys[i]!) inOrder = false;
  }
  if (!inOrder) sortKeys(keys);
  let copy: Record<string, unknown> | undefined = inOrder ? undefined : {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const item = record[key];
    const sorted = sortedCopy(item);
    if (sorted === UNORDERABLE) return UNORDERABLE;
    if (!copy && sorted !== item) {
      // In order so far, but a value changed: copy the keys before it, then go on in the copy.
      copy = {};
      for (let j = 0; j < i; j++) copy[keys[j]!] = record[keys[j]!];
    }
    if (copy) copy[key] = sorted;
  }
  return copy ?? value;
}

/**
 * The same text built by hand, sorting each object's keys (the first implementation: idempotency
 * keys already stored were made with it). Used for values with array-index or `__proto__` keys
 * (see below).
 */
export function sortedByHand(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(sortedByHand).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedByHand(record[k])}`).join(',')}}`;
}

/**
 * JSON text with object keys sorted at every depth, so that key order never changes a key or a
 * hash built from it. JSON.stringify writes an object's keys in their enumeration order, so a
 * copy whose objects were filled in sorted key order serialises canonically, on JSON.stringify's
 * own fast path (values already sorted, most arguments, are not copied at all). Values with a key
 * that cannot be ordered so (an array index, `__proto__`) are sorted by hand, the same text.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const sorted = sortedCopy(value);
  return sorted === UNORDERABLE ? sortedByHand(value) : (JSON.stringify(sorted) ?? 'null');
}
