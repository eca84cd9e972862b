import { isObject, type Schema } from '../registry/schema-index';
import type { KeyPatterns } from './key-patterns';

/** Whether some members of an object are read by a subschema besides `properties` (a map: `dict[str, int]`, `z.record(...)`). */
export const hasMemberSchemas = (sub: Schema): boolean => isObject(sub.additionalProperties) || isObject(sub.patternProperties);

/**
 * The one subschema the value of member `name` must fit besides `properties`, as validation
 * applies them: that of the one pattern of `patternProperties` the name matches, else
 * `additionalProperties` when it matches none. Undefined for a name `properties` declares
 * (repaired as that property), one two patterns match (both apply, and a repair to fit one could
 * fail the other), one no subschema reads (any value fits it: a repair would change a value sent
 * right), and one whose match is not known.
 */
export function memberSchema(name: string, sub: Schema, patterns: KeyPatterns): Schema | undefined {
  if (isObject(sub.properties) && Object.hasOwn(sub.properties, name)) return undefined;
  let found: unknown = undefined;
  let matched = 0;
  if (isObject(sub.patternProperties)) {
    for (const [pattern, schema] of Object.entries(sub.patternProperties)) {
      const matches = patterns.matches(pattern, name);
      if (matches === undefined || (matches && ++matched > 1)) return undefined;
      if (matches) found = schema;
    }
  }
  if (matched === 0) found = sub.additionalProperties;
  return isObject(found) ? found : undefined;
}
