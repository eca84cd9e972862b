import { isObject, SchemaIndex, type Schema } from '../registry/schema-index';

/** Each tool schema's index, by its root (a tool's schema object lives as long as the tool). */
const indexes = new WeakMap<Schema, SchemaIndex>();

function indexOf(root: Schema): SchemaIndex {
  let index = indexes.get(root);
  if (index === undefined) indexes.set(root, (index = new SchemaIndex(root)));
  return index;
}

/** What lenient repair reads of a subschema: beside one of these, a `$ref` is another schema that applies too. */
const READ = ['type', 'enum', 'properties', 'items'];

/** At most this many `$ref`s followed from one subschema (a loop of them is refused at registration). */
const MAX_HOPS = 32;

/** What else beside a lone `allOf` member makes it not the whole of what the wrapper says of the value. */
const BESIDE_ALL_OF = [...READ, '$ref', 'anyOf', 'oneOf', 'not', 'if', 'const', 'prefixItems'];

/**
 * The subschema lenient repair reads for `sub`, a schema inside `root`: the one its `$ref` names
 * (within `root`, as validation resolves it) when the `$ref` is all `sub` says of the value's shape,
 * so that a referenced model (pydantic's `$defs`, zod's `definitions`) is repaired as one written in
 * place; else `sub` itself. A `$ref` beside its own `type`, `properties`, `items` or `enum` is not
 * followed: both apply, and repairing to one could fail the other. An `allOf` of one member that is
 * all `sub` says of the value is followed alike: pydantic v1 wraps a nested model's or an enum's
 * `$ref` so to give it a description (`{"description": "...", "allOf": [{"$ref": ...}]}`), and
 * LangChain's dereferenced tool schemas keep the wrapper around the model itself.
 */
export function refTarget(sub: Schema, root: Schema): Schema {
  let at = sub;
  for (let hops = 0; hops < MAX_HOPS; hops++) {
    const next = typeof at.$ref === 'string' ? (READ.some((key) => Object.hasOwn(at, key)) ? undefined : refOf(at, root)) : loneAllOf(at);
    if (next === undefined) break;
    at = next;
  }
  return at;
}

/** The one member of `sub`'s `allOf` when that is all `sub` says of the value; else undefined. */
function loneAllOf(sub: Schema): Schema | undefined {
  if (!Array.isArray(sub.allOf) || sub.allOf.length !== 1 || !isObject(sub.allOf[0])) return undefined;
  return BESIDE_ALL_OF.some((key) => Object.hasOwn(sub, key)) ? undefined : sub.allOf[0];
}

/** The subschema `sub`'s own `$ref` names within `root`, whatever else `sub` says; undefined without one. */
export function refOf(sub: Schema, root: Schema): Schema | undefined {
  if (typeof sub.$ref !== 'string') return undefined;
  const target = indexOf(root).resolve(sub.$ref, sub);
  return isObject(target) ? target : undefined;
}

/**
 * The subschemas `sub`'s own `$dynamicRef` (`#name`) may run within `root`: each dynamic anchor of
 * that name, and the enclosing functions (`SchemaIndex.dynamicTargets`, an upper bound); none without one.
 */
export function dynamicRefTargets(sub: Schema, root: Schema): Schema[] {
  if (typeof sub.$dynamicRef !== 'string' || !sub.$dynamicRef.startsWith('#')) return [];
  return indexOf(root).dynamicTargets(sub.$dynamicRef.slice(1), sub).filter(isObject);
}
