import { isObject, ownValue } from './schema-members';

const NONE: readonly string[] = [];
const { isArray } = Array;
/** A key JavaScript orders before the others whatever the schema's text said (`"0"`, `"12"`). */
const INDEX_KEY = /^(?:0|[1-9]\d*)$/;

/**
 * The parameters a tool's positional arguments (`get_weather("Paris")`) fill, in order, read from
 * its input schema (parsed JSON), when the schema leaves no doubt: its only property, or its
 * required properties when `required` names them in the order they open `properties` (the order
 * of a Python signature, required first). Nothing otherwise: properties in another order than
 * `required`'s, no `required` beside several properties, or a key JavaScript reorders. Optional
 * properties are never filled by position: with `{to, cc, subject}` and only `to` required,
 * `send_email("a@x.org", "Hi")` may mean the subject, and would have set `cc`.
 */
export function positionalParametersOf(schema: unknown): readonly string[] {
  const properties = isObject(schema) ? ownValue(schema, 'properties') : undefined;
  if (!isObject(schema) || !isObject(properties)) return NONE;
  const keys = Object.keys(properties);
  if (keys.some((key) => INDEX_KEY.test(key))) return NONE;
  if (keys.length === 1) return keys;
  const required = ownValue(schema, 'required');
  if (!isArray(required) || required.length === 0) return NONE;
  const names = required as unknown[];
  return names.every((name, i) => name === keys[i]) ? (names as string[]) : NONE;
}
