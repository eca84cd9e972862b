const { hasOwn } = Object;
const { isArray } = Array;

/** Whether a parsed JSON value is an object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !isArray(value);
}

/** An own property's value (a schema's `__proto__` key is data, and nothing is inherited). */
export function ownValue(object: Record<string, unknown>, key: string): unknown {
  return hasOwn(object, key) ? object[key] : undefined;
}
