import type Ajv2020 from 'ajv/dist/2020';
import { readPointer } from '../json';

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => value !== null && typeof value === 'object' && !Array.isArray(value);
const escapeToken = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');

/** Keywords whose value maps names to subschemas, holds one subschema, or lists subschemas. */
const MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SINGLE = ['items', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'propertyNames', 'contains', 'not', 'if', 'then', 'else'];
const LISTS = ['prefixItems', 'allOf', 'anyOf', 'oneOf'];

/** JSON pointers (into `schema`) of every subschema, at a schema position, that has a `default`. */
export function defaultPointers(schema: Schema, at = ''): string[] {
  const found = Object.hasOwn(schema, 'default') && at !== '' ? [at] : [];
  for (const keyword of MAPS) {
    const map = schema[keyword];
    if (isSchema(map)) for (const [name, sub] of Object.entries(map)) if (isSchema(sub)) found.push(...defaultPointers(sub, `${at}/${keyword}/${escapeToken(name)}`));
  }
  for (const keyword of SINGLE) if (isSchema(schema[keyword])) found.push(...defaultPointers(schema[keyword] as Schema, `${at}/${keyword}`));
  for (const keyword of LISTS) {
    const list = schema[keyword];
    if (Array.isArray(list)) list.forEach((sub, i) => isSchema(sub) && found.push(...defaultPointers(sub, `${at}/${keyword}/${i}`)));
  }
  return found;
}

let serial = 0;

/**
 * The first `default` that its own subschema refuses, as a message, or undefined. Such a default
 * is filled into every call that leaves the field out, and each such call then fails validation
 * with a message blaming a value the model never sent. Each subschema is compiled in the context
 * of the whole schema (its `$ref`s resolve), its default validated on a copy. `compiled` is the
 * schema as Ajv compiles it (see `withOwnDefaults`): the same subschemas at the same pointers.
 */
export function refusedDefault(ajv: Ajv2020, schema: Schema, compiled: Schema = schema): string | undefined {
  const pointers = defaultPointers(schema);
  if (pointers.length === 0) return undefined;
  // A key no schema can hold already: the Ajv knows the schema by its own $id (which may be any URI).
  let key: string;
  do key = `urn:dispatch:defaults:${++serial}`;
  while (ajv.schemas[key] !== undefined || ajv.refs[key] !== undefined);
  const root: Schema = { ...compiled };
  delete root.$id;
  ajv.addSchema(root, key);
  try {
    for (const pointer of pointers) {
      // A pointer in a URI fragment: each token percent-encoded.
      const wrapper = { $ref: `${key}#${pointer.split('/').map(encodeURIComponent).join('/')}` };
      try {
        const validate = ajv.compile(wrapper);
        const value = (readPointer(schema, pointer) as Schema).default;
        if (!validate(structuredClone(value))) {
          const why = validate.errors?.[0];
          return `the default of ${pointer} (${JSON.stringify(value)?.slice(0, 100)}) does not match its own schema: ${why ? `${why.instancePath || 'the value'} ${why.message}` : 'invalid'}`;
        }
      } finally {
        ajv.removeSchema(wrapper);
      }
    }
    return undefined;
  } finally {
    ajv.removeSchema(key);
  }
}
