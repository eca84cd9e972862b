/** Keys found so far are searched in the list up to this many; past it, through a Set. */
const FEW_KEYS = 32;

/** Every object key anywhere in a value, once each, in the order found. */
class KeyList {
  readonly keys: string[] = [];
  private seen: Set<string> | undefined;

  add(key: string): void {
    if (this.seen) {
      if (this.seen.has(key)) return;
      this.seen.add(key);
    } else {
      if (this.keys.includes(key)) return;
      if (this.keys.length === FEW_KEYS) this.seen = new Set(this.keys).add(key);
    }
    this.keys.push(key);
  }

  /** The keys sorted by code units: in place when few (Array#sort allocates a work array). */
  sorted(): string[] {
    return this.keys.length <= FEW_KEYS ? sortFew(this.keys) : this.keys.sort();
  }
}

function collectKeys(value: unknown, keys: KeyList): void {
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

/** Sorts a short list in place by code units (an insertion sort: Array#sort allocates a work array). */
function sortFew(keys: string[]): string[] {
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

/**
 * True when every object in `value` enumerates its keys in sorted (code unit) order and none is
 * `__proto__`: then JSON.stringify's own order is the canonical one. Integer-like keys enumerate
 * in numeric order ("2" before "10"), which is not sorted order, so such objects answer false.
 */
function alreadySorted(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) {
    for (const item of value) if (!alreadySorted(item)) return false;
    return true;
  }
  const record = value as Record<string, unknown>;
  let previous: string | undefined;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) return false;
    if ((previous !== undefined && previous >= key) || key === '__proto__') return false;
    previous = key;
    if (!alreadySorted(record[key])) return false;
  }
  return true;
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
  // Objects whose keys already come in sorted order (most arguments: one key, or written sorted)
  // serialise as they are, on JSON.stringify's fast path, with no key list to build and sort.
  if (alreadySorted(value)) return JSON.stringify(value) ?? 'null';
  const keys = new KeyList();
  collectKeys(value, keys);
  const sorted = keys.sorted();
  if (sorted.includes('__proto__')) return sortedByHand(value);
  return JSON.stringify(value, sorted) ?? 'null';
}
