/** The numbers JavaScript and Python write beyond JSON's: `+1`, `007`, `.5`, `1.`. */
const LENIENT_NUMBER = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([eE][+-]?[0-9]+)?$/;

/**
 * A number the model wrote beyond JSON, as JSON text digit for digit: `+` and leading zeros
 * dropped, a bare `.` given its zero, an empty fraction dropped. Never through a double, so
 * `+9007199254740993` keeps its last digit. Undefined for what is no number (`1-2`, `.`, `e5`).
 */
export function lenientNumberAsJson(raw: string): string | undefined {
  const match = LENIENT_NUMBER.exec(raw);
  if (match === null) return undefined;
  const [, sign = '', whole = '', fraction = '', exponent = ''] = match;
  if (whole.length === 0 && fraction.length === 0) return undefined;
  let first = 0;
  while (first < whole.length - 1 && whole.charCodeAt(first) === 0x30) first++;
  const integer = whole.length === 0 ? '0' : whole.slice(first);
  return `${sign === '-' ? '-' : ''}${integer}${fraction.length > 0 ? `.${fraction}` : ''}${exponent}`;
}
