import { draft2020, getAjv } from 'json-schema-migrate';
import { shortened } from '../pipeline/bound-result';
import { rewriteRecursiveRefs, visitSchemas } from './recursive-refs';

/** The draft dispatch compiles (Ajv2020's meta-schema, by the URI it knows). */
export const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * `$schema` URIs of the drafts before 2020-12, as written with or without `#` and over http or
 * https: zod-to-json-schema (the MCP TypeScript SDK's tools among them) declares draft-07, older
 * tooling draft-04.
 */
const OLDER_DRAFTS: ReadonlyMap<string, string> = new Map([
  ['json-schema.org/draft-04/schema', 'draft-04'],
  ['json-schema.org/draft-06/schema', 'draft-06'],
  ['json-schema.org/draft-07/schema', 'draft-07'],
  ['json-schema.org/draft/2019-09/schema', 'draft 2019-09'],
]);

let quieted = false;
/**
 * json-schema-migrate's draft2020. Its Ajv's logger is the console: dispatch logs JSON, and what it
 * would say is handled here. Quieted at first use, not at load: getAjv compiles its Ajv (~85 ms),
 * which a process that never upgrades a schema need not pay at start.
 */
function migrate(schema: Record<string, unknown>): void {
  if (!quieted) (getAjv() as unknown as { logger: unknown }).logger = { log() {}, warn() {}, error() {} };
  quieted = true;
  draft2020(schema);
}

/** The longest `$schema` quoted back. */
const MAX_QUOTED = 200;

/** `uri` without its scheme and an empty fragment, as OLDER_DRAFTS keys it. */
const bare = (uri: string) => uri.trim().replace(/^https?:\/\//, '').replace(/#$/, '');

/** Which draft `$schema` names: 2020 (what dispatch compiles), an older one by name, or undefined (not a draft dispatch knows). */
export function declaredDraft(uri: unknown): '2020' | string | undefined {
  if (typeof uri !== 'string') return undefined;
  if (bare(uri) === 'json-schema.org/draft/2020-12/schema') return '2020';
  return OLDER_DRAFTS.get(bare(uri));
}

/**
 * A parsed input schema as dispatch compiles it, draft 2020-12: one declaring an older draft is
 * upgraded in place (json-schema-migrate, Ajv's: `items` as a list becomes `prefixItems` and
 * `additionalItems` `items`, `dependencies` becomes `dependentRequired`/`dependentSchemas`,
 * draft-04's boolean `exclusiveMinimum`/`exclusiveMaximum` and `id`; here, draft-06/07's `$id`
 * with a fragment and 2019-09's `$recursiveAnchor`/`$recursiveRef`, see recursive-refs.ts) and
 * then declares 2020-12.
 * Before, any `$schema` but 2020-12's was refused ("no schema with key or ref"), so every tool whose
 * schema zod-to-json-schema made could not be registered. One naming no draft dispatch knows is
 * refused, saying which it knows. Throws an Error with the message for the caller.
 */
export function upgradeDraft(schema: Record<string, unknown>): Record<string, unknown> {
  if (!('$schema' in schema)) return schema;
  const draft = declaredDraft(schema.$schema);
  if (draft === '2020') {
    schema.$schema = DRAFT_2020;
    return schema;
  }
  if (draft === undefined) {
    const named = typeof schema.$schema === 'string' ? `"${shortened(schema.$schema, MAX_QUOTED)}"` : 'is not a string and';
    throw new Error(`input_schema's $schema ${named} names no JSON Schema draft dispatch knows: use ${DRAFT_2020} (draft-04, -06, -07 and 2019-09 are upgraded to it), or leave $schema out`);
  }
  // The upgrade assigns keys by name: a "__proto__" key (however JSON spelled it) would set an
  // object's prototype instead.
  if (hasKey(schema, '__proto__')) throw new Error(`input_schema declares ${draft}, which dispatch upgrades to draft 2020-12, and has a "__proto__" key: declare ${DRAFT_2020} instead (no upgrade), or rename the key`);
  // json-schema-migrate reads exclusiveMinimum/Maximum as draft-04's booleans whatever the draft,
  // dropping a number (zod's .positive() is exclusiveMinimum: 0): draft-06 on, numbers are kept as
  // they are, hidden from it under another name and put back.
  const hidden = draft === 'draft-04' ? [] : hideNumericExclusives(schema);
  try {
    migrate(schema);
  } catch (error) {
    throw new Error(`input_schema declares ${draft} and could not be upgraded to draft 2020-12: ${shortened((error as Error).message, MAX_QUOTED)}`);
  } finally {
    for (const [object, key, value] of hidden) {
      delete object[`${HIDDEN}${key}`];
      object[key] = value;
    }
  }
  rewriteRecursiveRefs(schema, draft);
  if (draft === 'draft-06' || draft === 'draft-07') fragmentIdsToAnchors(schema);
  schema.$schema = DRAFT_2020;
  return schema;
}

/** The prefix a numeric exclusiveMinimum/Maximum is kept under while json-schema-migrate runs. */
const HIDDEN = '\u0000dispatch:';
const EXCLUSIVES = ['exclusiveMinimum', 'exclusiveMaximum'] as const;

type Hidden = [object: Record<string, unknown>, key: string, value: number];

/** Renames every numeric exclusiveMinimum/Maximum of the tree (keywords and property names alike: each is put back where it was). */
function hideNumericExclusives(root: unknown): Hidden[] {
  const hidden: Hidden[] = [];
  walk(root, (object) => {
    for (const key of EXCLUSIVES) {
      const value = object[key];
      if (typeof value !== 'number' || !Object.hasOwn(object, key)) continue;
      hidden.push([object, key, value]);
      delete object[key];
      object[`${HIDDEN}${key}`] = value;
    }
  });
  return hidden;
}

/**
 * Draft-06 and -07 name a subschema with `$id: "#name"` (or `"uri#name"`), 2019-09 on with
 * `$anchor: "name"`, and 2020-12's meta-schema refuses an `$id` with a fragment: so a draft-07
 * schema with `$ref: "#name"` did not compile. json-schema-migrate does this for draft-04's `id`
 * only. A subschema's `$id` naming the root's URI again is dropped, not repeated.
 */
function fragmentIdsToAnchors(root: Record<string, unknown>): void {
  const rootUri = typeof root.$id === 'string' ? root.$id.split('#')[0] : undefined;
  visitSchemas(root, (schema) => {
    const id = schema.$id;
    if (typeof id !== 'string' || !/^[^#]*#[A-Za-z_][-A-Za-z0-9._]*$/.test(id) || Object.hasOwn(schema, '$anchor')) return;
    const [uri, name] = id.split('#') as [string, string];
    delete schema.$id;
    if (uri !== '' && (schema === root || uri !== rootUri)) schema.$id = uri;
    schema.$anchor = name;
  });
}

/** Whether any object of the tree has its own `key`. */
function hasKey(root: unknown, key: string): boolean {
  let found = false;
  walk(root, (object) => (found ||= Object.hasOwn(object, key)));
  return found;
}

/** Calls `visit` with every object of a parsed JSON tree (its depth is bounded by the schema checks before). */
function walk(node: unknown, visit: (object: Record<string, unknown>) => void): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit);
    return;
  }
  const object = node as Record<string, unknown>;
  visit(object);
  for (const key of Object.keys(object)) walk(object[key], visit);
}
