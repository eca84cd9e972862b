/**
 * The shape of a JSON value without its contents (`{"city":"string","days":"number"}`), so logs
 * and events can describe arguments without carrying them.
 */
export function shapeOf(value: unknown, depth = 0): unknown {
  if (depth > 4) return '...';
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0], depth + 1), `x${value.length}`];
  if (typeof value === 'object') {
    // No prototype: a key named __proto__ (JSON.parse makes it an own key) is kept as a key, where
    // assigning it set the shape's prototype and the key was left out of events and logs.
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value as object).slice(0, 32)) out[key] = shapeOf((value as Record<string, unknown>)[key], depth + 1);
    return out;
  }
  return typeof value;
}
