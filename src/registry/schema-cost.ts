/**
 * The most subschemas a tool's input schema may apply to one value of its arguments. Applicators
 * that stay at the value (allOf, anyOf, oneOf, not, if/then/else, dependentSchemas, $ref,
 * $dynamicRef) add up, and through `$ref` they multiply: 21 `$defs` each a oneOf of two `$ref`s to
 * the next (1.4 KB) made Ajv evaluate 2^21 subschemas for `{"a":1}`, 5.8 s on the event loop every
 * tenant shares; 16 levels took 517 ms. The size and nesting limits do not see it.
 */
export const MAX_SUBSCHEMAS_PER_VALUE = 10_000;

type Schema = Record<string, unknown>;

/** Keywords whose subschemas apply to the same value as their schema. */
const IN_PLACE_ONE = ['not', 'if', 'then', 'else'];
const IN_PLACE_LISTS = ['allOf', 'anyOf', 'oneOf'];
const IN_PLACE_MAPS = ['dependentSchemas', 'dependencies'];
/** Meta-schemas Ajv holds itself: fixed, bounded, outside any tool's schema. */
const META_SCHEMA = /^https?:\/\/json-schema\.org\//;

const isObject = (value: unknown): value is Schema => value !== null && typeof value === 'object' && !Array.isArray(value);
const shown = (pointer: string) => {
  const text = `#${pointer}`;
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
};

/** Drops an empty fragment (`x#`, `x#/`), as Ajv does, so a resource has one name. */
const normalizeId = (id: string) => id.replace(/#\/?$/, '');

/** `ref` resolved against `base`; relative references against a base that is not a URL stay as written. */
function resolveUri(base: string, ref: string): string {
  if (ref.startsWith('#')) return normalizeId(`${base.split('#')[0]}${ref}`);
  try {
    return normalizeId(new URL(ref, base || undefined).href);
  } catch {
    return normalizeId(ref);
  }
}

/** Where each object of a schema document sits, and what its `$id`s and anchors name. */
class SchemaIndex {
  readonly pointers = new Map<object, string>();
  readonly bases = new Map<object, string>();
  private readonly parents = new Map<object, object>();
  private readonly resources = new Map<string, unknown>();
  private readonly anchors = new Map<string, object>();
  readonly dynamicAnchors = new Map<string, object[]>();

  constructor(root: Schema) {
    this.walk(root, '', '');
  }

  /** Every object, at any key: a `$ref` may point anywhere, and Ajv then compiles it as a schema. */
  private walk(value: unknown, pointer: string, base: string, parent?: object): void {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => this.walk(item, `${pointer}/${i}`, base, parent));
      return;
    }
    const schema = value as Schema;
    if (parent) this.parents.set(schema, parent);
    let here = base;
    if (typeof schema.$id === 'string') {
      here = resolveUri(base, schema.$id);
      this.resources.set(here, schema);
    } else if (pointer === '') {
      this.resources.set('', schema);
    }
    this.pointers.set(schema, pointer);
    this.bases.set(schema, here);
    if (typeof schema.$anchor === 'string') this.anchors.set(`${here.split('#')[0]}#${schema.$anchor}`, schema);
    if (typeof schema.$dynamicAnchor === 'string') {
      this.anchors.set(`${here.split('#')[0]}#${schema.$dynamicAnchor}`, schema);
      const list = this.dynamicAnchors.get(schema.$dynamicAnchor) ?? [];
      list.push(schema);
      this.dynamicAnchors.set(schema.$dynamicAnchor, list);
    }
    for (const [key, child] of Object.entries(schema)) this.walk(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, here, schema);
  }

  /** The objects that hold `schema`, nearest first. */
  ancestors(schema: object): object[] {
    const found: object[] = [];
    for (let at = this.parents.get(schema); at; at = this.parents.get(at)) found.push(at);
    return found;
  }

  /** The value a reference names in this document; undefined when it names none (or a meta-schema: `null`). */
  resolve(ref: string, from: object): unknown {
    const uri = resolveUri(this.bases.get(from) ?? '', ref);
    const hash = uri.indexOf('#');
    const [doc, fragment] = hash < 0 ? [uri, ''] : [uri.slice(0, hash), uri.slice(hash + 1)];
    const resource = this.resources.get(doc);
    if (resource === undefined) return META_SCHEMA.test(doc) ? null : undefined;
    if (fragment === '') return resource;
    if (!fragment.startsWith('/')) return this.anchors.get(uri);
    let current: unknown = resource;
    for (const raw of fragment.slice(1).split('/')) {
      let token: string;
      try {
        token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      } catch {
        return undefined;
      }
      if (current === null || typeof current !== 'object' || !Object.hasOwn(current, token)) return undefined;
      current = (current as Schema)[token];
    }
    return current;
  }
}

/** The subschemas `schema` applies to the value it is applied to (booleans included). */
function inPlace(schema: Schema, index: SchemaIndex): unknown[] {
  const found: unknown[] = [];
  for (const keyword of IN_PLACE_ONE) if (keyword in schema) found.push(schema[keyword]);
  for (const keyword of IN_PLACE_LISTS) if (Array.isArray(schema[keyword])) found.push(...(schema[keyword] as unknown[]));
  for (const keyword of IN_PLACE_MAPS) if (isObject(schema[keyword])) found.push(...Object.values(schema[keyword] as Schema).filter((v) => !Array.isArray(v)));
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const target = index.resolve(ref, schema);
    if (target === undefined) throw new Error(`the $ref ${JSON.stringify(ref.slice(0, 200))} at ${shown(index.pointers.get(schema)!)} does not resolve within input_schema`);
    if (target !== null) found.push(target);
  }
  // Ajv runs a $dynamicRef as the anchors of its name in the value's dynamic scope, or else as the
  // schema being compiled as one function (the root or a $ref's target): any anchor of the name,
  // or any schema enclosing this one.
  const dynamic = schema.$dynamicRef;
  if (typeof dynamic === 'string') found.push(...(index.dynamicAnchors.get(dynamic.slice(1)) ?? []), ...index.ancestors(schema));
  return found;
}

interface Frame {
  readonly schema: Schema;
  readonly children: unknown[];
  next: number;
  sum: number;
}

/**
 * Throws (with the message the compiler puts after 'input_schema does not compile: ') for a schema that can apply more than {@link MAX_SUBSCHEMAS_PER_VALUE} subschemas to one
 * value, or whose `$ref`s loop back to a schema at the same value (validation would never end).
 * Applicators that move to a part of the value (properties, items, contains...) start a new
 * count there, so recursive schemas that descend into their value (trees) are fine. Every object
 * of the document is counted as a starting point, so no `$ref` can reach an uncounted one.
 * Linear in the schema's size: each object's count is kept once computed.
 */
export function checkSchemaCost(root: Schema): void {
  const index = new SchemaIndex(root);
  const counted = new Map<object, number>();
  const open = new Set<object>();
  for (const start of index.pointers.keys()) {
    if (counted.has(start)) continue;
    const stack: Frame[] = [{ schema: start as Schema, children: inPlace(start as Schema, index), next: 0, sum: 1 }];
    open.add(start);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.next < top.children.length) {
        const child = top.children[top.next++];
        if (!isObject(child)) top.sum += 1;
        else if (counted.has(child)) top.sum += counted.get(child)!;
        if (top.sum > MAX_SUBSCHEMAS_PER_VALUE) throw tooCostly(index.pointers.get(top.schema)!);
        if (!isObject(child) || counted.has(child)) continue;
        if (open.has(child)) {
          throw new Error(
            `${shown(index.pointers.get(top.schema)!)} leads back to ${shown(index.pointers.get(child)!)} at the same place in the arguments ` +
              '(through allOf, anyOf, oneOf, not, if/then/else, dependentSchemas or $ref, never reaching a property or item): validating would never end',
          );
        }
        open.add(child);
        stack.push({ schema: child, children: inPlace(child, index), next: 0, sum: 1 });
        continue;
      }
      if (top.sum > MAX_SUBSCHEMAS_PER_VALUE) throw tooCostly(index.pointers.get(top.schema)!);
      stack.pop();
      open.delete(top.schema);
      counted.set(top.schema, top.sum);
      if (stack.length > 0) stack[stack.length - 1]!.sum += top.sum;
    }
  }
}

function tooCostly(pointer: string): Error {
  return new Error(
    `${shown(pointer)} applies more than ${MAX_SUBSCHEMAS_PER_VALUE} subschemas to one value ` +
      '(allOf, anyOf, oneOf, not, if/then/else, dependentSchemas and $ref add up, and multiply through $ref): validating a call could take exponential time',
  );
}
