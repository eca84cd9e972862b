/** Where the subschemas of a schema document sit, and what its `$ref`s and `$dynamicRef`s name. */

export type Schema = Record<string, unknown>;

/** Meta-schemas Ajv holds itself: fixed, bounded, outside any tool's schema. */
const META_SCHEMA = /^https?:\/\/json-schema\.org\//;
/** Keywords whose values are data (or numbers, strings), never schemas: Ajv does not look inside them. */
const DATA_KEYWORDS = new Set(['default', 'enum', 'const', 'examples', 'required', 'pattern', 'format']);
/** Keywords whose arrays hold schemas; any other array is data. */
const SCHEMA_LISTS = new Set(['items', 'prefixItems', 'allOf', 'anyOf', 'oneOf']);
/** Keywords whose object values map names to schemas. */
const SCHEMA_MAPS = new Set(['$defs', 'definitions', 'properties', 'patternProperties', 'dependencies', 'dependentSchemas']);

export const isObject = (value: unknown): value is Schema => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Drops an empty fragment (`x#`, `x#/`), as Ajv does, so a resource has one name. */
const normalizeId = (id: string) => id.replace(/#\/?$/, '');
const escapeToken = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** `ref` resolved against `base`; relative references against a base that is not a URL stay as written. */
function resolveUri(base: string, ref: string): string {
  if (ref.startsWith('#')) return normalizeId(`${base.split('#')[0]}${ref}`);
  try {
    return normalizeId(new URL(ref, base || undefined).href);
  } catch {
    return normalizeId(ref);
  }
}

/**
 * The schema positions of a document, walked as Ajv walks them to find `$id`s and anchors: every
 * key but the data keywords (const, enum, default, examples...), arrays only under the keywords
 * that hold lists of schemas. A `$ref` may still name an object elsewhere (Ajv then compiles it as
 * a schema), so every object gets a pointer for messages.
 */
export class SchemaIndex {
  private readonly pointers = new Map<object, string>();
  private readonly bases = new Map<object, string>();
  private readonly parents = new Map<object, object>();
  private readonly resources = new Map<string, unknown>();
  private readonly anchors = new Map<string, object>();
  private readonly dynamicAnchors = new Map<string, object[]>();
  /** Schemas Ajv may compile as functions of their own: the root, `$ref` targets, dynamic anchors. */
  private readonly functions = new Set<object>();

  constructor(readonly root: Schema) {
    this.walk(root, '', '', true);
    this.functions.add(root);
    for (const [schema] of this.bases) {
      const target = typeof (schema as Schema).$ref === 'string' ? this.resolve((schema as Schema).$ref as string, schema) : undefined;
      if (isObject(target)) this.functions.add(target);
      if (typeof (schema as Schema).$dynamicAnchor === 'string') this.functions.add(schema);
    }
  }

  private walk(value: unknown, pointer: string, base: string, schemaPosition: boolean, parent?: object): void {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => this.walk(item, `${pointer}/${i}`, base, schemaPosition, parent));
      return;
    }
    const schema = value as Schema;
    if (!this.pointers.has(schema)) this.pointers.set(schema, pointer);
    if (!schemaPosition) {
      for (const [key, child] of Object.entries(schema)) this.walk(child, `${pointer}/${escapeToken(key)}`, base, false);
      return;
    }
    if (parent) this.parents.set(schema, parent);
    let here = base;
    if (typeof schema.$id === 'string') {
      here = resolveUri(base, schema.$id);
      this.resources.set(here, schema);
    } else if (pointer === '') {
      this.resources.set('', schema);
    }
    this.bases.set(schema, here);
    if (typeof schema.$anchor === 'string') this.anchors.set(`${here.split('#')[0]}#${schema.$anchor}`, schema);
    if (typeof schema.$dynamicAnchor === 'string') {
      this.anchors.set(`${here.split('#')[0]}#${schema.$dynamicAnchor}`, schema);
      this.dynamicAnchors.set(schema.$dynamicAnchor, [...(this.dynamicAnchors.get(schema.$dynamicAnchor) ?? []), schema]);
    }
    for (const [key, child] of Object.entries(schema)) {
      const at = `${pointer}/${escapeToken(key)}`;
      if (SCHEMA_MAPS.has(key) && isObject(child)) {
        for (const [name, sub] of Object.entries(child)) this.walk(sub, `${at}/${escapeToken(name)}`, here, !Array.isArray(sub), schema);
      } else {
        const isSchema = !DATA_KEYWORDS.has(key) && (!Array.isArray(child) || SCHEMA_LISTS.has(key));
        this.walk(child, at, here, isSchema, schema);
      }
    }
  }

  /** The objects of the document at schema positions, in document order. */
  schemas(): IterableIterator<Schema> {
    return this.bases.keys() as IterableIterator<Schema>;
  }

  /** `#/pointer` of an object of the document, cut at 200 characters. */
  shown(schema: object): string {
    const text = `#${this.pointers.get(schema) ?? '?'}`;
    return text.length > 200 ? `${text.slice(0, 200)}...` : text;
  }

  /**
   * What Ajv may run for `$dynamicRef: "#name"` in `from`: an anchor of that name met earlier in
   * the value's dynamic scope, or else the function being compiled, which is the root or an
   * enclosing `$ref` target or dynamic anchor (Ajv compiles each of those as one function). It
   * runs one of them; each is listed once (all count, an upper bound).
   */
  dynamicTargets(name: string, from: object): object[] {
    const found = new Set(this.dynamicAnchors.get(name) ?? []);
    for (let at: object | undefined = from; at; at = this.parents.get(at)) if (this.functions.has(at)) found.add(at);
    return [...found];
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
