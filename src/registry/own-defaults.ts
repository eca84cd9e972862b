import type Ajv2020 from 'ajv/dist/2020';
import { _ } from 'ajv/dist/2020';
import { isObject, SchemaIndex, type Schema } from './schema-index';

/** The keyword, on a schema with `properties`, holding the defaults filled as own properties. */
const OWN_DEFAULTS = 'dispatch:ownDefaults';

/** Whether `value` holds an object with a `__proto__` key of its own, at any depth. */
function holdsProtoKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (!Array.isArray(value) && Object.hasOwn(value, '__proto__')) return true;
  return Object.values(value).some(holdsProtoKey);
}

/**
 * Whether Ajv's own filling would lose the default of property `name`. Ajv writes a default into
 * its code as an object literal, where a `"__proto__"` key sets the prototype (the key is lost:
 * `{"__proto__":{"x":1},"y":2}` reached the tool as `{"y":2}`), and fills only when
 * `data[name] === undefined`, never for a name Object.prototype has (`toString`, `constructor`).
 */
const ajvWouldLose = (name: string, value: unknown) => name in Object.prototype || holdsProtoKey(value);

/** The entries of a `properties` map whose defaults Ajv would lose. */
const lostDefaults = (properties: unknown): [string, Schema][] =>
  isObject(properties) ? Object.entries(properties).filter((entry): entry is [string, Schema] => isObject(entry[1]) && Object.hasOwn(entry[1], 'default') && ajvWouldLose(entry[0], entry[1].default)) : [];

/**
 * The schema Ajv compiles: the indexed schema itself, or a copy in which each default Ajv would lose is moved
 * to the `dispatch:ownDefaults` keyword of the schema holding the `properties`, which fills it as
 * an own data property (see `useOwnDefaults`). Throws when the schema uses that keyword itself.
 */
export function withOwnDefaults(index: SchemaIndex): Schema {
  const schema = index.root;
  let lost = false;
  for (const at of index.schemas()) {
    if (Object.hasOwn(at, OWN_DEFAULTS)) throw new Error(`the keyword "${OWN_DEFAULTS}" is reserved`);
    lost ||= lostDefaults(at.properties).length > 0;
  }
  if (!lost) return schema;
  // structuredClone keeps own "__proto__" keys as data; JSON.parse made them so.
  const copy = structuredClone(schema);
  for (const at of new SchemaIndex(copy).schemas()) {
    const moved = lostDefaults(at.properties);
    if (moved.length === 0) continue;
    at[OWN_DEFAULTS] = Object.fromEntries(moved.map(([name, sub]) => [name, sub.default]));
    for (const [, sub] of moved) delete sub.default;
  }
  return copy;
}

/** What the source of a compiled `dispatch:ownDefaults` requires for {@link fillOwnDefaults}; see schema-module.ts. */
export const OWN_DEFAULTS_MODULE = 'dispatch:own-defaults';

/** Fills each default missing from `data` as an own data property, a copy of the schema's value. */
export function fillOwnDefaults(data: Record<string, unknown>, defaults: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(defaults)) {
    if (!Object.hasOwn(data, name)) Object.defineProperty(data, name, { value: structuredClone(value), writable: true, enumerable: true, configurable: true });
  }
}

/**
 * Teaches `ajv` the `dispatch:ownDefaults` keyword. It runs first among the keywords of an object,
 * right after Ajv fills its own defaults, so `required`, `properties` and the rest see the filled
 * values; like Ajv's defaults, not under anyOf, oneOf or not.
 */
export function useOwnDefaults(ajv: Ajv2020): void {
  ajv.addKeyword({
    keyword: OWN_DEFAULTS,
    type: 'object',
    schemaType: 'object',
    before: 'maxProperties',
    code(cxt) {
      if (cxt.it.compositeRule) return;
      const fill = cxt.gen.scopeValue('func', { ref: fillOwnDefaults, code: _`require(${OWN_DEFAULTS_MODULE}).fillOwnDefaults` });
      cxt.gen.code(_`${fill}(${cxt.data}, ${cxt.schemaValue})`);
    },
  });
}
