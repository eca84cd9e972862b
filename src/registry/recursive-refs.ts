/**
 * Draft 2019-09's `$recursiveAnchor` / `$recursiveRef` (2020-12 replaced them by `$dynamicAnchor` /
 * `$dynamicRef`) as the plain `$ref`s they amount to in a tool's schema. json-schema-migrate leaves
 * them as they are, and the 2020-12 meta-schema refused the schema: "$recursiveAnchor must be string".
 *
 * `$recursiveRef: "#"` first names the root of its schema resource (the document, or the nearest
 * subschema with an `$id`); when that root has `$recursiveAnchor: true`, it names instead the
 * outermost resource with `$recursiveAnchor: true` that validation passed through. A tool's schema
 * is one closed document (no remote `$ref`) and validation always starts at its root, so:
 * - in a resource without the anchor, or with the only anchor of the document, the reference
 *   always reaches its own resource's root: `$ref: "#"`;
 * - in an anchored resource when the root is anchored too, it always reaches the root: `$ref` to the
 *   root's `$id` (refused when the root has no absolute `$id` to name it by);
 * - several anchored resources but not the root: which one it reaches depends on the path taken,
 *   refused, saying what to write instead.
 * Not `$dynamicRef`: Ajv runs the first anchor it met in any branch (an anchor set in one
 * property's subtree stays set in the next one's), and its fallback where none was met is the
 * enclosing function, not the resource root; dispatch's cost bound counts every anchor of the name
 * as a target, so a tree extended by another (2019-09's own example) was refused as exponential.
 */

type Schema = Record<string, unknown>;

/** Keywords whose values are data, never schemas (as SchemaIndex reads them). */
const DATA_KEYWORDS = new Set(['default', 'enum', 'const', 'examples', 'required', 'pattern', 'format']);
/** Keywords whose arrays hold schemas; any other array is data. */
const SCHEMA_LISTS = new Set(['items', 'prefixItems', 'allOf', 'anyOf', 'oneOf']);
/** Keywords whose object values map names to schemas. */
const SCHEMA_MAPS = new Set(['$defs', 'definitions', 'properties', 'patternProperties', 'dependencies', 'dependentSchemas']);
/** The longest pointer or value quoted in a message. */
const MAX_QUOTED = 200;

const PREFIX = 'input_schema declares draft 2019-09 and has';
const RECURSIVE_KEYWORDS = ['$recursiveAnchor', '$recursiveRef'] as const;

interface Found {
  readonly schema: Schema;
  readonly pointer: string;
  /** The root of its schema resource. */
  readonly resource: Schema;
}

const isObject = (value: unknown): value is Schema => value !== null && typeof value === 'object' && !Array.isArray(value);
const shown = (text: string) => (text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}...` : text);
const at = (pointer: string) => shown(`#${pointer}`);

/**
 * Rewrites the `$recursiveAnchor`s and `$recursiveRef`s of a schema upgraded from `draft` in place;
 * throws an Error saying why when it cannot faithfully. Before 2019-09 they mean nothing (unknown
 * keywords), and the author surely meant 2019-09's: refused, saying so.
 */
export function rewriteRecursiveRefs(root: Schema, draft: string): void {
  const anchors: Found[] = [];
  const refs: Found[] = [];
  visitSchemas(root, (schema, pointer, resource) => {
    const keyword = RECURSIVE_KEYWORDS.find((key) => Object.hasOwn(schema, key));
    if (keyword && draft !== 'draft 2019-09') {
      throw new Error(`input_schema declares ${draft}, which has no ${keyword} (2019-09 added it), and has one at ${at(pointer)}: declare https://json-schema.org/draft/2019-09/schema, or ${keyword === '$recursiveRef' ? 'write $ref' : 'remove it'}`);
    }
    if (Object.hasOwn(schema, '$recursiveAnchor')) anchors.push({ schema, pointer, resource });
    if (Object.hasOwn(schema, '$recursiveRef')) refs.push({ schema, pointer, resource });
  });
  if (anchors.length === 0 && refs.length === 0) return;
  for (const { schema, pointer, resource } of anchors) {
    const value = schema.$recursiveAnchor;
    if (typeof value !== 'boolean') throw new Error(`${PREFIX} $recursiveAnchor ${shown(JSON.stringify(value) ?? String(value))} at ${at(pointer)}: it is true or false`);
    if (value && schema !== resource) {
      throw new Error(`${PREFIX} $recursiveAnchor: true at ${at(pointer)}, which is not the root of a schema resource (the document's or a subschema with its own $id), the only place 2019-09 reads it: move it there, or remove it`);
    }
  }
  const anchored = new Set(anchors.filter((a) => a.schema.$recursiveAnchor === true).map((a) => a.schema));
  if (anchored.size > 1 && !anchored.has(root)) {
    const where = anchors.filter((a) => anchored.has(a.schema)).map((a) => at(a.pointer));
    throw new Error(
      `${PREFIX} $recursiveAnchor: true in ${anchored.size} schema resources (${shown(where.join(', '))}) but not at its root: which one a $recursiveRef reaches then depends on the path validation took, which dispatch's validator does not follow. Put $recursiveAnchor: true at the root too (every $recursiveRef in an anchored resource then reaches the root), or write $ref to the resource meant instead of $recursiveRef`,
    );
  }
  const targets = refs.map(({ schema, pointer, resource }) => {
    if (schema.$recursiveRef !== '#') {
      throw new Error(`${PREFIX} $recursiveRef ${shown(JSON.stringify(schema.$recursiveRef) ?? '')} at ${at(pointer)}: 2019-09 defines it only as "#"; for a reference that does not depend on the path taken, write $ref`);
    }
    if (resource === root || !anchored.has(resource) || !anchored.has(root)) return '#';
    const id = absoluteId(root);
    if (id === undefined) {
      throw new Error(`${PREFIX} $recursiveRef at ${at(pointer)} in an anchored schema resource, which reaches the document's root (anchored too), and the root has no absolute $id to reference it by: give the root an $id such as "https://example.com/my-tool"`);
    }
    return id;
  });
  for (const { schema } of anchors) delete schema.$recursiveAnchor;
  refs.forEach(({ schema }, i) => {
    delete schema.$recursiveRef;
    const target = targets[i]!;
    if (!Object.hasOwn(schema, '$ref')) schema.$ref = target;
    else schema.allOf = [...(Array.isArray(schema.allOf) ? schema.allOf : []), { $ref: target }];
  });
}

/** The root's `$id` when it is an absolute URI (an empty fragment dropped), which names it from any resource of the document. */
function absoluteId(root: Schema): string | undefined {
  if (typeof root.$id !== 'string') return undefined;
  try {
    new URL(root.$id); // throws for a relative one
    return root.$id.replace(/#$/, '');
  } catch {
    return undefined;
  }
}

/** Calls `found` with each object at a schema position of `root`, its JSON pointer and the root of its schema resource (the nearest with its own `$id` but a fragment, or `root`). */
export const visitSchemas = (root: Schema, found: (schema: Schema, pointer: string, resource: Schema) => void) => visit(root, '', root, found);

function visit(schema: Schema, pointer: string, resource: Schema, found: (schema: Schema, pointer: string, resource: Schema) => void): void {
  const here = pointer !== '' && typeof schema.$id === 'string' && !schema.$id.startsWith('#') ? schema : resource;
  found(schema, pointer, here);
  for (const [key, child] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(key)) continue;
    const path = `${pointer}/${escapeToken(key)}`;
    if (SCHEMA_MAPS.has(key) && isObject(child)) {
      for (const [name, sub] of Object.entries(child)) if (isObject(sub)) visit(sub, `${path}/${escapeToken(name)}`, here, found);
    } else if (Array.isArray(child)) {
      if (SCHEMA_LISTS.has(key)) child.forEach((sub, i) => isObject(sub) && visit(sub, `${path}/${i}`, here, found));
    } else if (isObject(child)) {
      visit(child, path, here, found);
    }
  }
}

const escapeToken = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
