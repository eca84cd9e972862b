import { isObject, type Schema } from '../registry/schema-index';
import { hasMemberSchemas } from './map-members';
import { alwaysParts } from './schema-parts';

/**
 * The names an object's schema `sub` (within `root`) allows when it allows no others, or undefined
 * when it allows others or which it allows is not known for sure:
 * - `additionalProperties: false`: its own `properties`;
 * - `unevaluatedProperties: false`: the `properties` of `sub` and of every part that always applies
 *   to the same object, its `allOf` members and `$ref` targets, nested (a `$ref` to a base model
 *   beside the model's own properties, as pydantic and zod write inheritance).
 *
 * Undefined when a part may allow names beyond its `properties` (`patternProperties`, an
 * `additionalProperties` other than false), when a part is conditional (`anyOf`, `oneOf`, `if`,
 * `dependentSchemas`, `$dynamicRef`: the names would depend on the value), or past 32 parts.
 */
export function closedNames(sub: Schema, root: Schema): string[] | undefined {
  if (hasMemberSchemas(sub)) return undefined;
  if (sub.additionalProperties === false) return ownNames(sub);
  if (Object.hasOwn(sub, 'additionalProperties')) return undefined;
  if (sub.unevaluatedProperties !== false) return undefined;
  const parts = alwaysParts(sub, root);
  if (parts === undefined || parts.some((part) => allowsOthers(part, part === sub) || CONDITIONAL.some((key) => Object.hasOwn(part, key)))) return undefined;
  return [...new Set(parts.flatMap(ownNames))];
}

/** What makes the names a part allows depend on the value. */
const CONDITIONAL = ['anyOf', 'oneOf', 'if', 'dependentSchemas', '$dynamicRef'];

/**
 * Whether a part may allow names beyond its `properties`: `patternProperties`, an
 * `additionalProperties` other than false, or (but on the schema asked about) an
 * `unevaluatedProperties` other than false.
 */
const allowsOthers = (part: Schema, asked: boolean): boolean =>
  hasMemberSchemas(part) ||
  (Object.hasOwn(part, 'additionalProperties') && part.additionalProperties !== false) ||
  (!asked && Object.hasOwn(part, 'unevaluatedProperties') && part.unevaluatedProperties !== false);

const ownNames = (sub: Schema): string[] => (isObject(sub.properties) ? Object.keys(sub.properties) : []);
