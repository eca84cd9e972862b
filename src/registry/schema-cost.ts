import { isObject, SchemaIndex, type Schema } from './schema-index';

/**
 * The most subschemas a tool's input schema may apply to one value of its arguments. Applicators
 * that stay at the value (allOf, anyOf, oneOf, not, if/then/else, dependentSchemas, $ref,
 * $dynamicRef) add up, and through `$ref` they multiply: 21 `$defs` each a oneOf of two `$ref`s to
 * the next (1.4 KB) made Ajv evaluate 2^21 subschemas for `{"a":1}`, 5.8 s on the event loop every
 * tenant shares; 16 levels took 517 ms. Applicators that move to a part of the value multiply too
 * when two reach the same part: a recursive `$ref` under both properties.a and patternProperties
 * '^a$' (141 bytes) doubled the work per level of `{"a":{"a":...}}`, 2.8 s at 20 levels.
 */
export const MAX_SUBSCHEMAS_PER_VALUE = 10_000;
/** The deepest arguments any configuration lets through (limits.max_argument_depth's maximum). */
export const MAX_ARGUMENT_DEPTH = 1_000;

/** Keywords whose subschemas apply to the same value as their schema. */
const IN_PLACE_ONE = ['not', 'if', 'then', 'else'];
const IN_PLACE_LISTS = ['allOf', 'anyOf', 'oneOf'];
const IN_PLACE_MAPS = ['dependentSchemas', 'dependencies'];
/** Keywords whose subschemas apply to a property, a property name or an item of the value. */
const MOVE_ONE = ['additionalProperties', 'unevaluatedProperties', 'propertyNames', 'additionalItems', 'contains', 'unevaluatedItems'];
const MOVE_LISTS = ['prefixItems', 'items'];
const MOVE_MAPS = ['properties', 'patternProperties'];

/** A schema of the document and the subschemas it applies, at its value and at parts of it. */
interface Node {
  readonly schema: Schema;
  readonly inPlace: unknown[];
  readonly moves: unknown[];
  /** Subschemas applied to the value itself, counting every path through in-place applicators. */
  count: number;
}

const values = (map: unknown) => (isObject(map) ? Object.values(map).filter((v) => !Array.isArray(v)) : []);
const list = (value: unknown) => (Array.isArray(value) ? value : value === undefined ? [] : [value]);

function inPlace(schema: Schema, index: SchemaIndex): unknown[] {
  const found: unknown[] = [];
  for (const keyword of IN_PLACE_ONE) if (keyword in schema) found.push(schema[keyword]);
  for (const keyword of IN_PLACE_LISTS) if (Array.isArray(schema[keyword])) found.push(...(schema[keyword] as unknown[]));
  for (const keyword of IN_PLACE_MAPS) found.push(...values(schema[keyword]));
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const target = index.resolve(ref, schema);
    if (target === undefined) throw new Error(`the $ref ${JSON.stringify(ref.slice(0, 200))} at ${index.shown(schema)} does not resolve within input_schema`);
    if (target !== null) found.push(target);
  }
  if (typeof schema.$dynamicRef === 'string' && schema.$dynamicRef.startsWith('#')) found.push(...index.dynamicTargets(schema.$dynamicRef.slice(1), schema));
  return found;
}

function moves(schema: Schema): unknown[] {
  const found: unknown[] = [];
  for (const keyword of MOVE_ONE) if (keyword in schema) found.push(schema[keyword]);
  for (const keyword of MOVE_LISTS) found.push(...list(schema[keyword]));
  for (const keyword of MOVE_MAPS) found.push(...values(schema[keyword]));
  return found;
}

/** Every schema the root reaches, and their in-place counts; children are counted before their parents. */
function reachable(root: Schema, index: SchemaIndex): Node[] {
  const nodes = new Map<object, Node>();
  const queue: Schema[] = [root];
  const add = (child: unknown) => {
    if (isObject(child) && !nodes.has(child)) {
      nodes.set(child, { schema: child, inPlace: inPlace(child, index), moves: moves(child), count: 0 });
      queue.push(child);
    }
  };
  nodes.set(root, { schema: root, inPlace: inPlace(root, index), moves: moves(root), count: 0 });
  for (let i = 0; i < queue.length; i++) {
    const node = nodes.get(queue[i]!)!;
    node.inPlace.forEach(add);
    node.moves.forEach(add);
  }
  const ordered: Node[] = [];
  const open = new Set<object>();
  const done = new Set<object>();
  for (const start of nodes.values()) {
    if (done.has(start.schema)) continue;
    const stack = [{ node: start, next: 0, sum: 1 }];
    open.add(start.schema);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.next < top.node.inPlace.length) {
        const child = top.node.inPlace[top.next++];
        top.sum += isObject(child) ? (done.has(child) ? nodes.get(child)!.count : 0) : 1;
        if (top.sum > MAX_SUBSCHEMAS_PER_VALUE) throw tooCostly(index.shown(top.node.schema));
        if (!isObject(child) || done.has(child)) continue;
        if (open.has(child)) {
          throw new Error(
            `${index.shown(top.node.schema)} leads back to ${index.shown(child)} at the same place in the arguments ` +
              '(through allOf, anyOf, oneOf, not, if/then/else, dependentSchemas or $ref, never reaching a property or item): validating would never end',
          );
        }
        open.add(child);
        stack.push({ node: nodes.get(child)!, next: 0, sum: 1 });
        continue;
      }
      stack.pop();
      open.delete(top.node.schema);
      done.add(top.node.schema);
      top.node.count = top.sum;
      ordered.push(top.node);
      if (stack.length > 0) stack[stack.length - 1]!.sum += top.sum;
      if (stack.length > 0 && stack[stack.length - 1]!.sum > MAX_SUBSCHEMAS_PER_VALUE) throw tooCostly(index.shown(stack[stack.length - 1]!.node.schema));
    }
  }
  return ordered;
}

/**
 * Subschemas applied to the parts of a value, counting every path through in-place applicators:
 * to a property not named in `objectKeys` (`object`), to a named one (`object` plus its entry), to
 * an item past `arrayPositions` (`array`) or at one of them (`array` plus its entry).
 */
interface Parts {
  readonly object: number;
  readonly objectKeys: ReadonlyMap<string, number>;
  readonly array: number;
  readonly arrayPositions: readonly number[];
}

const NO_PARTS: Parts = { object: 0, objectKeys: new Map(), array: 0, arrayPositions: [] };
const hasMoves = (schema: Schema) => [...MOVE_ONE, ...MOVE_LISTS, ...MOVE_MAPS].some((keyword) => keyword in schema);

/** The parts `schema` itself reaches, `weight` giving what each subschema applies to its part. */
function ownParts(schema: Schema, weight: (child: unknown) => number): Parts {
  const patterns = values(schema.patternProperties).reduce((sum: number, child) => sum + weight(child), 0);
  const others = Math.max(patterns, weight(schema.additionalProperties));
  const objectKeys = new Map<string, number>();
  for (const [key, child] of Object.entries(isObject(schema.properties) ? schema.properties : {})) objectKeys.set(key, weight(child) + patterns - others);
  const prefix = Array.isArray(schema.items) ? schema.items : list(schema.prefixItems);
  const rest = (Array.isArray(schema.items) ? 0 : weight(schema.items)) + weight(schema.additionalItems);
  return {
    object: others + weight(schema.unevaluatedProperties) + weight(schema.propertyNames),
    objectKeys,
    array: rest + weight(schema.contains) + weight(schema.unevaluatedItems),
    arrayPositions: prefix.map((child) => weight(child) - rest),
  };
}

function addParts(into: { object: number; objectKeys: Map<string, number>; array: number; arrayPositions: number[] }, parts: Parts): void {
  into.object += parts.object;
  into.array += parts.array;
  for (const [key, extra] of parts.objectKeys) into.objectKeys.set(key, (into.objectKeys.get(key) ?? 0) + extra);
  parts.arrayPositions.forEach((extra, i) => (into.arrayPositions[i] = (into.arrayPositions[i] ?? 0) + extra));
}

const most = (base: number, extras: Iterable<number>) => {
  let top = 0;
  for (const extra of extras) top = Math.max(top, extra);
  return base + top;
};

/**
 * Throws (with the message the compiler puts after 'input_schema does not compile: ') for a schema
 * that can apply more than {@link MAX_SUBSCHEMAS_PER_VALUE} subschemas to one value of arguments
 * up to {@link MAX_ARGUMENT_DEPTH} levels deep, or whose `$ref`s loop back to a schema at the same
 * value (validation would never end). Only the schemas the root reaches count (const, enum,
 * default and examples hold data). A subschema reaching a part of the value applies there what it
 * applies to its own value; those reaching the same part add up, so recursive schemas whose
 * subschemas each reach a different part (trees) stay at their count per value, and two reaching
 * the same part double it per level. Counted level by level until nothing changes.
 */
export function checkSchemaCost(root: Schema, index = new SchemaIndex(root)): void {
  const nodes = reachable(root, index);
  let below = new Map<object, number>(nodes.map((node) => [node.schema, node.count]));
  for (let depth = 1; depth <= MAX_ARGUMENT_DEPTH; depth++) {
    const previous = below;
    const weight = (child: unknown) => (child === undefined ? 0 : isObject(child) ? previous.get(child)! : 1);
    const parts = new Map<object, Parts>();
    below = new Map();
    let changed = false;
    for (const node of nodes) {
      const objects = node.inPlace.filter(isObject);
      let mine: Parts;
      if (!hasMoves(node.schema) && objects.length <= 1) mine = objects.length === 0 ? NO_PARTS : parts.get(objects[0]!)!;
      else {
        const sum = { object: 0, objectKeys: new Map<string, number>(), array: 0, arrayPositions: [] as number[] };
        addParts(sum, ownParts(node.schema, weight));
        for (const child of objects) addParts(sum, parts.get(child)!);
        mine = sum;
      }
      parts.set(node.schema, mine);
      const applied = Math.max(node.count, most(mine.object, mine.objectKeys.values()), most(mine.array, mine.arrayPositions));
      if (applied > MAX_SUBSCHEMAS_PER_VALUE) throw tooCostlyBelow(index.shown(node.schema), depth);
      if (applied !== previous.get(node.schema)) changed = true;
      below.set(node.schema, applied);
    }
    if (!changed) return;
  }
}

function tooCostly(pointer: string): Error {
  return new Error(
    `${pointer} applies more than ${MAX_SUBSCHEMAS_PER_VALUE} subschemas to one value ` +
      '(allOf, anyOf, oneOf, not, if/then/else, dependentSchemas and $ref add up, and multiply through $ref): validating a call could take exponential time',
  );
}

function tooCostlyBelow(pointer: string, depth: number): Error {
  return new Error(
    `${pointer} applies more than ${MAX_SUBSCHEMAS_PER_VALUE} subschemas to one value ${depth} level${depth === 1 ? '' : 's'} below the value it validates ` +
      '(properties, patternProperties, additionalProperties, unevaluatedProperties, propertyNames, prefixItems, items, contains and unevaluatedItems reaching the same part of a value add up, and multiply through $ref): validating a call could take exponential time',
  );
}
