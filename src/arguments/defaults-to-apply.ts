import { isObject, type Schema } from '../registry/schema-index';
import { refOf } from './schema-refs';

/** At most this many `allOf` and `$ref` steps in a row at one value (a loop of `$ref`s is refused at registration). */
const MAX_HOPS = 32;

const reachesDefault = new WeakMap<Schema, boolean>();
/** Whether `sub` holds a `default`, or a `$ref` that may lead to one: else nothing below it is filled. */
function mayFill(sub: Schema): boolean {
  let known = reachesDefault.get(sub);
  if (known === undefined) {
    const text = JSON.stringify(sub);
    reachesDefault.set(sub, (known = text.includes('"default"') || text.includes('"$ref"')));
  }
  return known;
}

/**
 * The defaults validation will fill into `value` (Ajv's useDefaults), as warning lines
 * (`applied default /lines/0/qty: 1`), so that a lenient tool's defaults are never applied
 * silently: for properties absent from an object, under `properties` and, for the other keys,
 * `additionalProperties`; in the items of an array (`items`, and `prefixItems` for the first
 * ones); through `allOf` branches and `$ref`s (beside other keywords too). Not in `anyOf`, `oneOf`,
 * `not` or `if`, where Ajv fills none, nor in `then`/`else` (which applies is validation's to say).
 * Only subschemas that hold a `default` or a `$ref` are read, so large arguments cost nothing more
 * when their schema has no default for them.
 */
export function defaultsToApply(value: unknown, root: Schema): string[] {
  const lines: string[] = [];
  // Each subschema read once per value: `$ref`s and `allOf`s reaching one twice (a chain of them
  // doubling at each step) would otherwise be read exponentially often.
  const seen = new Map<object, Set<Schema>>();
  const visit = (current: unknown, sub: Schema, path: string, hops: number): void => {
    if (hops > MAX_HOPS || current === null || typeof current !== 'object' || !mayFill(sub)) return;
    let read = seen.get(current);
    if (read === undefined) seen.set(current, (read = new Set()));
    if (read.has(sub)) return;
    read.add(sub);
    const target = refOf(sub, root);
    if (target !== undefined) visit(current, target, path, hops + 1);
    if (Array.isArray(sub.allOf)) for (const branch of sub.allOf) if (isObject(branch)) visit(current, branch, path, hops + 1);
    if (Array.isArray(current)) {
      const prefix = Array.isArray(sub.prefixItems) ? sub.prefixItems : [];
      current.forEach((item, i) => {
        const itemSchema = i < prefix.length ? prefix[i] : sub.items;
        if (isObject(itemSchema)) visit(item, itemSchema, `${path}/${i}`, 0);
      });
      return;
    }
    const object = current as Record<string, unknown>;
    const properties = isObject(sub.properties) ? sub.properties : {};
    for (const [key, prop] of Object.entries(properties)) {
      if (!isObject(prop)) continue;
      if (!Object.hasOwn(object, key)) {
        if (Object.hasOwn(prop, 'default')) lines.push(`applied default ${path}/${key}: ${JSON.stringify(prop.default)}`);
      } else visit(object[key], prop, `${path}/${key}`, 0);
    }
    if (isObject(sub.additionalProperties) && !isObject(sub.patternProperties)) {
      for (const key of Object.keys(object)) if (!Object.hasOwn(properties, key)) visit(object[key], sub.additionalProperties, `${path}/${key}`, 0);
    }
  };
  if (isObject(root)) visit(value, root, '', 0);
  // A property in two branches (allOf, or beside a $ref) is filled once.
  return [...new Set(lines)];
}
