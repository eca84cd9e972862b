import { isObject, ownValue } from './schema-members';
import type { TextParameter, TextParameters } from './types';

const NONE: TextParameters = new Map();
const { isArray } = Array;

/**
 * The parameters a tool's input schema (parsed JSON) asks for as text: each top-level
 * `properties[key]` whose `type` is `"string"` or `["string"]` (`text`), or `["string", "null"]`
 * in either order (`text_or_null`). Only a direct `type` counts, as vLLM's `qwen3_coder` and
 * `glm4_moe` parsers read one: a `$ref`, `anyOf` or `allOf` (at the top or for the key), or any
 * other type, leaves the key's value read as JSON, so a value the schema may take as a number
 * stays one. The work is one pass over the top-level properties.
 */
export function textParametersOf(schema: unknown): TextParameters {
  const properties = isObject(schema) ? ownValue(schema, 'properties') : undefined;
  if (!isObject(properties)) return NONE;
  const found = new Map<string, TextParameter>();
  for (const [key, property] of Object.entries(properties)) {
    const kind = textKind(property);
    if (kind !== undefined) found.set(key, kind);
  }
  return found.size === 0 ? NONE : found;
}

/** How a property's value is read, when its type is a string (or a string or null) alone. */
function textKind(property: unknown): TextParameter | undefined {
  const type = isObject(property) ? ownValue(property, 'type') : undefined;
  if (type === 'string') return 'text';
  if (!isArray(type)) return undefined;
  let string = false;
  let nullable = false;
  for (const name of type as unknown[]) {
    if (name === 'string') string = true;
    else if (name === 'null') nullable = true;
    else return undefined;
  }
  if (!string) return undefined;
  return nullable ? 'text_or_null' : 'text';
}
