/** Share of a bound kept once it is passed: the oldest tenth goes in one pass. */
export const TRIM_TO = 0.9;

/**
 * Evicts the oldest entries (insertion order) of a Map or Set while `over()` holds, through one
 * iterator. Evicting from the front with a new iterator each time is O(n) per entry: V8 leaves
 * deleted slots there until it rehashes, and every new iterator skips them. Callers that evict
 * down to a tenth below their bound (TRIM_TO) keep the cost per insertion flat.
 */
export function evictOldest<K>(map: Map<K, unknown> | Set<K>, over: () => boolean, evict: (key: K) => void = (key) => void map.delete(key)): void {
  const keys = map.keys();
  while (over()) {
    const next = keys.next();
    if (next.done) return;
    evict(next.value);
  }
}
