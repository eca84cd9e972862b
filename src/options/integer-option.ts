/** The range an integer option must be in: `min` 1 when not given; no upper bound unless `max`. */
export interface IntegerRange {
  /** @default 1 */
  readonly min?: number;
  readonly max?: number;
}

/** `value` as JSON, but a non-finite number by name (`.nan` or 1e400 in YAML): not "null". */
const asJson = (value: unknown): string => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : JSON.stringify(value));

/**
 * `value` when it is an integer in `range`; otherwise a RangeError that the option resolvers'
 * tests assert word for word: `NAME must be a positive integer, got SHOWN` (`a non-negative
 * integer` from 0, `an integer from MIN to MAX` with a `max`). `show` writes the value after
 * `got`: JSON by default (strings quoted; NaN and Infinity, which JSON writes as null, by name),
 * or `String` where a resolver always did.
 */
export function checkInteger(name: string, value: unknown, range: IntegerRange = {}, show: (value: unknown) => string = asJson): number {
  const { min = 1, max } = range;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && (max === undefined || value <= max)) return value;
  const what = max !== undefined || (min !== 0 && min !== 1) ? `an integer from ${min} to ${max ?? Infinity}` : min === 0 ? 'a non-negative integer' : 'a positive integer';
  throw new RangeError(`${name} must be ${what}, got ${show(value)}`);
}
