import type { SchemaIndex } from './schema-index';

/** Keywords whose keys name members of the value, which validation looks up by those names. */
const MEMBER_KEYWORDS = ['properties', 'dependentSchemas', 'dependentRequired', 'dependencies'];

/**
 * The refusal of a schema naming a member `__proto__` (`{"properties": {"__proto__": {...}}}`):
 * Ajv's code never reads such a member as the schema says (`{"__proto__": 5}` passed a string
 * property, nothing under it was checked or repaired, and beside `additionalProperties: false` a
 * valid one was refused as unexpected), so the schema would promise what validation does not do.
 * Undefined for any other schema.
 */
export function protoMember(index: SchemaIndex): string | undefined {
  for (const schema of index.schemas()) {
    for (const keyword of MEMBER_KEYWORDS) {
      const members = schema[keyword];
      if (members !== null && typeof members === 'object' && !Array.isArray(members) && Object.hasOwn(members, '__proto__')) {
        return `${index.shown(schema)}/${keyword} names a member "__proto__", which JSON Schema validation cannot check as written (it is read as the object's prototype): rename the property`;
      }
    }
  }
  return undefined;
}
