import { levenshtein } from '../json';
import { isObject, type Schema } from './schema-index';

/**
 * The keywords of the drafts dispatch compiles: 2020-12, and those of the older drafts it upgrades
 * (2019-09, draft-07, -06 and -04: schema-drafts.ts). Ajv runs with strict mode off (tool schemas
 * carry vendor keywords: x-*, OpenAPI's `example`, `discriminator`), so it ignores any other key,
 * and a misspelt keyword (`propertees`, `requird`, `maxLenght`) turned its check off unseen.
 */
const KEYWORDS: readonly string[] = [
  '$schema', '$id', '$ref', '$anchor', '$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor', '$vocabulary', '$comment', '$defs', 'definitions',
  'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'properties', 'patternProperties', 'additionalProperties', 'propertyNames',
  'unevaluatedProperties', 'dependentSchemas', 'dependencies', 'prefixItems', 'items', 'additionalItems', 'unevaluatedItems', 'contains',
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern',
  'maxItems', 'minItems', 'uniqueItems', 'maxContains', 'minContains', 'maxProperties', 'minProperties', 'required', 'dependentRequired',
  'format', 'contentEncoding', 'contentMediaType', 'contentSchema', 'title', 'description', 'default', 'deprecated', 'readOnly', 'writeOnly', 'examples',
];
/**
 * Keys taken as they are though no draft's keyword, and never offered: OpenAPI's `example` (one
 * edit from `examples`), `nullable` (which Ajv honours) and `discriminator`, and draft-04's `id`.
 */
const TAKEN: ReadonlySet<string> = new Set([...KEYWORDS, 'example', 'nullable', 'discriminator', 'id']);
const LOWER = new Map(KEYWORDS.map((keyword) => [keyword.toLowerCase(), keyword]));

/** Keywords whose value is one schema, a list of schemas, or a mapping of names (data) to schemas. */
const ONE = ['not', 'if', 'then', 'else', 'additionalProperties', 'unevaluatedProperties', 'propertyNames', 'additionalItems', 'unevaluatedItems', 'contains', 'contentSchema', 'items'];
const LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
const MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];

/** The fewest letters (a `$` aside) of a keyword a key two edits away may misspell. */
const MIN_LETTERS_FOR_EDITS = 5;
const MAX_EDITS = 2;
/** The longest key that can be within {@link MAX_EDITS} of a keyword: longer ones are not read. */
const LONGEST = Math.max(...KEYWORDS.map((keyword) => keyword.length)) + MAX_EDITS;
const MAX_QUOTED = 200;

const bare = (key: string) => key.replace(/^\$/, '').toLowerCase();
/** The keywords a key may be {@link MAX_EDITS} edits from, lower-case, by the first letter after a `$`. */
const EDITABLE = KEYWORDS.filter((keyword) => bare(keyword).length >= MIN_LETTERS_FOR_EDITS).map((keyword) => ({ keyword, lower: keyword.toLowerCase(), first: bare(keyword)[0] }));

/**
 * The keyword `key` (not one) misspells: the same but for case (`additionalproperties`), or for a
 * keyword of {@link MIN_LETTERS_FOR_EDITS} letters or more, at most {@link MAX_EDITS} edits away
 * and from the same first letter, the nearest (the first listed of those as near). The first letter
 * keeps vendor keys apart: `x-items`, `uiSchema` (two edits from `items`, `$schema`) are no typos.
 */
function misspelt(key: string): string | undefined {
  if (key.length > LONGEST) return undefined;
  const lower = key.toLowerCase();
  const exact = LOWER.get(lower);
  if (exact !== undefined) return exact;
  const first = bare(key)[0];
  let best: string | undefined;
  let bestDistance = MAX_EDITS + 1;
  for (const candidate of EDITABLE) {
    if (candidate.first !== first) continue;
    const distance = levenshtein(lower, candidate.lower, bestDistance - 1);
    if (distance < bestDistance) [best, bestDistance] = [candidate.keyword, distance];
  }
  return best;
}

const escapeToken = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
const shown = (text: string) => (text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}...` : text);

/**
 * The refusal of the first key at a schema position of `root` that misspells a keyword (see
 * misspelt), with its JSON pointer and the keyword meant; or undefined. Schema positions are the
 * root and what the keywords above hold (properties' values, items, $defs, allOf members...): the
 * names of properties, $defs and patterns are data, as are const, enum, default and examples, and
 * what an unknown key holds is not read. Each distinct key is compared once (a vendor key on every
 * subschema costs one look), and a key is compared only with keywords within two letters of its
 * length, two edits at most: linear in the schema (max_schema_bytes, 32 levels).
 */
export function keywordTypo(root: Schema): string | undefined {
  const looked = new Map<string, string | undefined>();
  const visit = (schema: Schema, pointer: string): string | undefined => {
    for (const key of Object.keys(schema)) {
      if (TAKEN.has(key)) continue;
      if (!looked.has(key)) looked.set(key, misspelt(key));
      const meant = looked.get(key);
      if (meant !== undefined) {
        return `input_schema's key ${JSON.stringify(shown(key))} at ${shown(`${pointer}/${escapeToken(key)}`)} is not a JSON Schema keyword, so it checks nothing: did you mean "${meant}"? (a keyword of your own can start with x-)`;
      }
    }
    const children: [unknown, string][] = [];
    for (const keyword of ONE) if (isObject(schema[keyword])) children.push([schema[keyword], `${pointer}/${keyword}`]);
    for (const keyword of LISTS) if (Array.isArray(schema[keyword])) (schema[keyword] as unknown[]).forEach((sub, i) => children.push([sub, `${pointer}/${keyword}/${i}`]));
    for (const keyword of MAPS) {
      const map = schema[keyword];
      if (isObject(map)) for (const [name, sub] of Object.entries(map)) children.push([sub, `${pointer}/${keyword}/${escapeToken(name)}`]);
    }
    for (const [child, at] of children) {
      const problem = isObject(child) ? visit(child, at) : undefined;
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
  return visit(root, '#');
}

/** {@link keywordTypo} of a schema's text; undefined when it is no JSON object. */
export function keywordTypoIn(schemaText: string): string | undefined {
  let schema: unknown;
  try {
    schema = JSON.parse(schemaText);
  } catch {
    return undefined;
  }
  return isObject(schema) ? keywordTypo(schema) : undefined;
}
