import { isObject, type Schema } from '../registry/schema-index';
import { refOf } from './schema-refs';

/** Most subschemas read as parts of one object's schema (`allOf` members and `$ref` targets, nested). */
const MAX_PARTS = 32;

/**
 * The parts of `sub` (within `root`) that always apply to the same value: `sub` itself, its `allOf`
 * members and its `$ref` target, nested (a `$ref` to a base model beside a model's own properties,
 * as pydantic and zod write inheritance; TypeBox's and zod's intersections). Undefined when a
 * `$ref` does not resolve, or past 32 parts.
 */
export function alwaysParts(sub: Schema, root: Schema): Schema[] | undefined {
  // In the order written, `sub`'s own first: repairs are listed in it.
  const seen = new Set<Schema>();
  const pending: Schema[] = [sub];
  for (let next = 0; next < pending.length; next++) {
    const part = pending[next]!;
    if (seen.has(part)) continue;
    seen.add(part);
    if (seen.size > MAX_PARTS) return undefined;
    if (Array.isArray(part.allOf)) {
      for (const member of part.allOf) if (isObject(member)) pending.push(member);
    }
    if (typeof part.$ref === 'string') {
      const target = refOf(part, root);
      if (target === undefined) return undefined;
      pending.push(target);
    }
  }
  return [...seen];
}

/** The properties an object's schema declares, across its parts, and those it requires. */
export interface PartProperties {
  readonly properties: ReadonlyMap<string, Schema>;
  readonly required: ReadonlySet<string>;
}

/**
 * The properties `sub` and its parts that always apply (`alwaysParts`) declare, for lenient repair
 * to walk: a property two parts declare with schemas of their own is left out (repairing a value
 * to fit one could fail the other). `required` is every part's. Only `sub`'s own when a part does
 * not resolve.
 */
export function partProperties(sub: Schema, root: Schema): PartProperties {
  const properties = new Map<string, Schema>();
  const required = new Set<string>();
  const twice = new Set<string>();
  for (const part of alwaysParts(sub, root) ?? [sub]) {
    if (Array.isArray(part.required)) for (const name of part.required) if (typeof name === 'string') required.add(name);
    if (!isObject(part.properties)) continue;
    for (const [name, schema] of Object.entries(part.properties)) {
      if (!isObject(schema)) continue;
      const known = properties.get(name);
      if (known !== undefined && known !== schema) twice.add(name);
      else properties.set(name, schema);
    }
  }
  for (const name of twice) properties.delete(name);
  return { properties, required };
}
