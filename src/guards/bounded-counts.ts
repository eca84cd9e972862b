/** Keys a {@link countUnder} map holds at most; past it, new keys count under "*". */
export const MAX_COUNTED_KEYS = 10_000;

/** Adds one to `key` in `counts`, or to "*" once the map holds MAX_COUNTED_KEYS other keys. */
export function countUnder(counts: Map<string, number>, key: string): void {
  const at = counts.has(key) || counts.size < MAX_COUNTED_KEYS ? key : '*';
  counts.set(at, (counts.get(at) ?? 0) + 1);
}
