import { isObject, type Schema } from '../registry/schema-index';
import { dynamicRefTargets, refOf } from './schema-refs';

/** At most this many `allOf`, `then`, `else`, `dependentSchemas` and reference steps in a row at one value (a loop of `$ref`s is refused at registration). */
const MAX_HOPS = 32;

const reachesDefault = new WeakMap<Schema, boolean>();
/** Whether `sub` holds a `default`, or a `$ref` or `$dynamicRef` that may lead to one: else nothing below it is filled. */
function mayFill(sub: Schema): boolean {
  let known = reachesDefault.get(sub);
  if (known === undefined) {
    const text = JSON.stringify(sub);
    reachesDefault.set(sub, (known = text.includes('"default"') || text.includes('"$ref"') || text.includes('"$dynamicRef"')));
  }
  return known;
}

/** Keywords whose map names a member's subschemas by the member's name (`dependentSchemas`, as draft-07's `dependencies`). */
const DEPENDENT = ['dependentSchemas', 'dependencies'];

/** A property validation may fill: absent from `object` when the watch began, with a default in a subschema that may apply. */
interface Slot {
  readonly object: Record<string, unknown>;
  readonly key: string;
  readonly path: string;
}

/** The defaults one validation fills into a value, known once it ran; see {@link watchDefaults}. */
export interface DefaultsWatch {
  /**
   * One warning line per default validation filled since the watch began, with the value the tool
   * gets (`applied default /lines/0/qty: 1`), in the order the schema names them.
   */
  filled(): string[];
  /** Takes out what validation filled: the value is again as it was when the watch began. */
  undo(): void;
}

const UNWATCHED: DefaultsWatch = { filled: () => [], undo: () => undefined };

/**
 * Watches the defaults validation (Ajv's useDefaults) may fill into `value`, so that a lenient
 * tool's defaults are never applied silently, and only those applied are named. Which subschemas
 * validation applies may depend on the value (`then` or `else`, as `if` says; the patterns a name
 * matches, and so whether `additionalProperties` applies): every one it may apply is read, and
 * what it did is seen after it ran, as a property absent before and present after. Read:
 * `properties`, `patternProperties`, `additionalProperties` and `unevaluatedProperties` of the
 * other names; `items`, `prefixItems` for the first ones, `unevaluatedItems`; `allOf`, `$ref`,
 * `$dynamicRef`, `then`, `else`, and `dependentSchemas` (`dependencies`) of a property sent. Not
 * `if`, `anyOf`, `oneOf`, `not`, `contains` or `propertyNames`, where Ajv fills none. Only
 * subschemas that hold a `default` or a reference are read, so large arguments cost nothing more
 * when their schema has no default for them.
 */
export function watchDefaults(value: unknown, root: Schema): DefaultsWatch {
  if (!isObject(root) || !mayFill(root)) return UNWATCHED;
  const slots: Slot[] = [];
  const noted = new Map<object, Set<string>>();
  const note = (object: Record<string, unknown>, key: string, path: string) => {
    let keys = noted.get(object);
    if (keys === undefined) noted.set(object, (keys = new Set()));
    if (keys.has(key)) return;
    keys.add(key);
    slots.push({ object, key, path });
  };
  // Each subschema read once per value: `$ref`s and `allOf`s reaching one twice (a chain of them
  // doubling at each step) would otherwise be read exponentially often.
  const seen = new Map<object, Set<Schema>>();
  const visit = (current: unknown, sub: Schema, path: string, hops: number): void => {
    if (hops > MAX_HOPS || current === null || typeof current !== 'object' || !mayFill(sub)) return;
    let read = seen.get(current);
    if (read === undefined) seen.set(current, (read = new Set()));
    if (read.has(sub)) return;
    read.add(sub);
    const inPlace = (branch: unknown) => isObject(branch) && visit(current, branch, path, hops + 1);
    const part = (item: unknown, itemSchema: unknown, at: string) => isObject(itemSchema) && visit(item, itemSchema, at, 0);
    inPlace(refOf(sub, root));
    dynamicRefTargets(sub, root).forEach(inPlace);
    if (Array.isArray(sub.allOf)) sub.allOf.forEach(inPlace);
    inPlace(sub.then);
    inPlace(sub.else);
    if (Array.isArray(current)) {
      const prefix = Array.isArray(sub.prefixItems) ? sub.prefixItems : [];
      current.forEach((item, i) => {
        part(item, i < prefix.length ? prefix[i] : sub.items, `${path}/${i}`);
        part(item, sub.unevaluatedItems, `${path}/${i}`);
      });
      return;
    }
    const object = current as Record<string, unknown>;
    for (const keyword of DEPENDENT) {
      const dependent = sub[keyword];
      if (isObject(dependent)) for (const [key, branch] of Object.entries(dependent)) if (Object.hasOwn(object, key)) inPlace(branch);
    }
    const properties = isObject(sub.properties) ? sub.properties : {};
    for (const [key, prop] of Object.entries(properties)) {
      if (!isObject(prop)) continue;
      if (Object.hasOwn(object, key)) part(object[key], prop, `${path}/${key}`);
      else if (Object.hasOwn(prop, 'default')) note(object, key, path);
    }
    const patterns = isObject(sub.patternProperties) ? Object.values(sub.patternProperties).filter((p): p is Schema => isObject(p) && mayFill(p)) : [];
    const others = [sub.additionalProperties, sub.unevaluatedProperties].filter((p): p is Schema => isObject(p) && mayFill(p));
    if (patterns.length === 0 && others.length === 0) return;
    for (const key of Object.keys(object)) {
      for (const pattern of patterns) part(object[key], pattern, `${path}/${key}`);
      if (!Object.hasOwn(properties, key)) for (const other of others) part(object[key], other, `${path}/${key}`);
    }
  };
  visit(value, root, '', 0);
  return {
    filled: () => slots.filter(({ object, key }) => Object.hasOwn(object, key)).map(({ object, key, path }) => `applied default ${path}/${key}: ${JSON.stringify(object[key])}`),
    undo: () => {
      for (const { object, key } of slots) delete object[key];
    },
  };
}
