import { jsonDepth } from '../json';
import { enumBudget, enumHas, enumMatches, MAX_ENUM_COMPARISONS, type EnumBudget } from './enum-index';
import { inexactNumber, inexactNumberProblem } from './exact-numbers';
import { closedNames } from './closed-names';
import { keyPatterns, type KeyPatterns } from './key-patterns';
import { hasMemberSchemas, memberSchema } from './map-members';
import { renameNearKeys } from './near-keys';
import { partProperties, type PartProperties } from './schema-parts';
import { refTarget } from './schema-refs';

type Schema = Record<string, unknown>;

const NO_PROPERTIES: PartProperties = { properties: new Map(), required: new Set() };

const typesOf = (schema: Schema): string[] =>
  typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? (schema.type as string[]) : [];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'null':
      return value === null;
    default:
      return typeof value === type;
  }
}

const DECIMAL = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

type Candidate = { value: unknown; what: string };
/** What a value could be repaired to; `refused` when a repair was found and refused (it says why). */
type Candidates = Candidate[] | { refused: string };

/**
 * JSON text in a string, decoded under the checks the arguments text had: not nesting the
 * arguments deeper than `maxDepth` with the `above` levels it sits in, and every number kept
 * exactly (`"[9007199254740993]"` is not `[9007199254740992]`, `"{\"a\":1e400}"` not `{"a":null}`).
 * Undefined when the text is not JSON.
 */
function decodeJsonText(text: string, above: number, maxDepth: number): { value: unknown } | { refused: string } | undefined {
  if (above + jsonDepth(text) > maxDepth) return { refused: `JSON text not decoded: the arguments would nest deeper than ${maxDepth} levels` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const inexact = inexactNumber(text);
  return inexact === undefined ? { value } : { refused: `JSON text not decoded: ${inexactNumberProblem(inexact)}` };
}

/**
 * The candidate values a mismatching scalar at `depth` could be repaired to, with what each repair
 * is; `sideEffects` holds enum corrections to a doubled letter added or dropped (`isNearMiss`).
 */
function candidates(value: unknown, schema: Schema, depth: number, maxDepth: number, sideEffects: boolean, budget: EnumBudget): Candidates {
  const types = typesOf(schema);
  const out: Candidate[] = [];
  if (typeof value === 'string') {
    const trimmed = value.trim();
    // A decimal number only ("0x10", "0b1", "Infinity" and "" are not), and one a double keeps exactly.
    if ((types.includes('number') || types.includes('integer')) && DECIMAL.test(trimmed) && inexactNumber(trimmed) === undefined) {
      const n = Number(trimmed);
      if (Number.isFinite(n) && (types.includes('number') || Number.isInteger(n))) out.push({ value: n, what: 'string to number' });
    }
    if (types.includes('boolean') && /^(true|false)$/i.test(trimmed)) {
      out.push({ value: trimmed.toLowerCase() === 'true', what: 'string to boolean' });
    }
    if ((types.includes('object') || types.includes('array')) && /^[[{]/.test(trimmed)) {
      const decoded = decodeJsonText(trimmed, depth, maxDepth);
      // Refused, the text is not wrapped in an array either: that would be another call.
      if (decoded !== undefined && 'refused' in decoded) return decoded;
      if (decoded !== undefined && types.some((t) => matchesType(decoded.value, t))) out.push({ value: decoded.value, what: 'JSON text decoded' });
    }
    if (Array.isArray(schema.enum)) {
      const near = enumMatches(value, schema.enum as unknown[], sideEffects, budget);
      out.push(...near.map((e) => ({ value: e, what: 'enum value corrected' })));
    }
  }
  // A number or boolean where text is wanted (an id, a zip code, a year: `"zip": 12345`, or an
  // XML-ish value ParseToolCalls read as JSON for a tool it did not know). Only an integer a
  // double keeps and a boolean: `1.5` may have been written `1.50`, and null says none.
  if (types.includes('string') && ((typeof value === 'number' && Number.isSafeInteger(value)) || typeof value === 'boolean')) {
    out.push({ value: String(value), what: `${typeof value} to string` });
  }
  // Not null: it says "none", and [null] is a list of one item the model never sent.
  if (types.includes('array') && !Array.isArray(value) && value !== null && out.length === 0) {
    out.push({ value: [value], what: 'bare value wrapped in an array' });
  }
  return out;
}

/** Keywords that say what a value must be: a schema holding one besides its union is not read as the union's one branch. */
const CONSTRAINTS = ['type', 'enum', 'const', 'properties', 'items', 'prefixItems', 'allOf', 'not', 'if'];

/** Whether a branch admits null alone (`{"type": "null"}`, `{"const": null}`, `{"enum": [null]}`). */
const onlyNull = (branch: unknown): boolean =>
  isObject(branch) && (branch.type === 'null' || (Object.hasOwn(branch, 'const') && branch.const === null) || (Array.isArray(branch.enum) && branch.enum.length === 1 && branch.enum[0] === null));

/**
 * The one branch a value other than null must fit, of a schema that is a union of it and null and
 * says nothing else of the value (`{"anyOf": [{"type": "integer"}, {"type": "null"}]}`, pydantic's
 * `Optional[int]`, or `oneOf`): read through a `$ref` as the branch says it. Undefined for any other
 * schema, a union of two types or more among them: which one a value was meant for is not known.
 */
function nullableBranch(sub: Schema, root: Schema): Schema | undefined {
  const union = Array.isArray(sub.anyOf) ? sub.anyOf : Array.isArray(sub.oneOf) ? sub.oneOf : undefined;
  if (union === undefined || (Array.isArray(sub.anyOf) && Array.isArray(sub.oneOf)) || CONSTRAINTS.some((key) => Object.hasOwn(sub, key))) return undefined;
  const others = union.filter((branch) => !onlyNull(branch));
  return others.length === 1 && others.length < union.length && isObject(others[0]) ? refTarget(others[0], root) : undefined;
}

function valueFits(value: unknown, schema: Schema): boolean {
  const types = typesOf(schema);
  if (types.length > 0 && !types.some((t) => matchesType(value, t))) return false;
  return !Array.isArray(schema.enum) || enumHas(schema.enum as unknown[], value);
}

const SIDE_EFFECTS_REASON = 'on a tool with side effects only a doubled letter is corrected, as other typos often spell another word';

/** At most this many values a "did you mean" names. */
const MAX_MEANT = 3;

/**
 * The line naming the allowed values a string the enum refused was likely meant as, when it was
 * not corrected: on a tool with side effects (`found` empty), or as near to several values or with
 * several repairs possible. Those it equals but for case, else its near misses by the read-only
 * rule (`isNearMiss` without `sideEffects`), at most 3. None for a value near no allowed one, as an
 * opposite (`deactivate` for `activate`) is: it may well be meant as written, and naming the other
 * would invite the model to send it. Undefined when it names none.
 */
function didYouMean(value: unknown, schema: Schema, path: string, found: readonly Candidate[], budget: EnumBudget): { line: string; suggestion: string } | undefined {
  if (typeof value !== 'string' || !Array.isArray(schema.enum)) return undefined;
  const meant = enumMatches(value, schema.enum as unknown[], false, budget).slice(0, MAX_MEANT);
  if (meant.length === 0) return undefined;
  const names = meant.map((e) => JSON.stringify(e)).join(' or ');
  const why = found.length === 0 ? SIDE_EFFECTS_REASON : meant.length > 1 ? 'it is as near to each' : 'more than one repair fits';
  return {
    line: `${path}: ${JSON.stringify(value)} is not an allowed value; did you mean ${names}? (not corrected: ${why})`,
    suggestion: `If you meant ${names} for ${path}, call again with it; otherwise fix the arguments to match the tool's input schema.`,
  };
}

/**
 * Repairs one call's arguments may need at most: past it none is made and the call is refused.
 * Each is a line of the result's warnings, and a lenient tool's arguments of 240,000 `"1"` for
 * integers (960 KB) took a second of the event loop every tenant shares (a security probe); this
 * many take ~40 ms.
 */
export const MAX_REPAIRS = 10_000;

/** Limits of a repair: the arguments' depth limit, and whether the tool has side effects. */
export interface RepairOptions {
  readonly maxDepth?: number;
  readonly sideEffects?: boolean;
}

/**
 * Repairs arguments against a schema, as a lenient tool opts in to: string to number, integer or
 * boolean; bare value (not null: it means none) to a one-element array; JSON text to an object
 * or array (refused when it would nest the arguments deeper than `maxDepth` or holds a number a
 * double does not keep); an enum value that differs from exactly one allowed value in case only,
 * or else is a misspelling of exactly one (`isNearMiss`: one typo, never a prefix that makes an
 * opposite, stricter than DESIGN's "Levenshtein 2"; with `sideEffects`, only a typo that spells
 * no other word, so not `charge` for `change`); `null` for an optional field dropped, unless the
 * field has a default and the tool has side effects (`sideEffects`): the default would take
 * null's place, `{"notify":null}` becoming `notify: true`, where the model may have meant "no";
 * a property an object's schema does not allow (`additionalProperties: false`, or
 * `unevaluatedProperties: false` beside `allOf` parts and `$ref`s: `closedNames`) renamed to the
 * one declared property it misspells and the object lacks (`citty` to `city`; `renameNearKeys`,
 * the near miss read as for enum values).
 * Only values that do not fit are touched, and a value with more than one possible repair is
 * left as it is, so a repair never turns an invalid call into a different valid one. Returns the
 * repaired copy, one line per repair, and one per repair refused (for the error message). An enum
 * near miss not corrected is named there ("did you mean"), never applied, and the first such is
 * `suggestion`, the next step for the model. A member of a map (a name `properties` does not
 * declare) is repaired as the one subschema its value must fit (`memberSchema`: the one pattern
 * its name matches, else `additionalProperties`); its null is never dropped, as it may say
 * "remove it". Subschemas are read in place, or through a `$ref` that is all they say of the
 * value (`refTarget`, an `allOf` of one member too): a referenced model is repaired as one written
 * in place, an object's properties as its `allOf` parts and `$ref` targets declare them too
 * (`partProperties`: not one two parts declare), and a union of one
 * branch and null (pydantic's `Optional[int]`: `anyOf` of it and `{"type": "null"}`) as that
 * branch, for a value other than null.
 */
export function repairArguments(value: unknown, schema: Schema, options: RepairOptions = {}): RepairResult {
  const { maxDepth = 64, sideEffects = false } = options;
  const repairs: string[] = [];
  const refused: string[] = [];
  let suggestion: string | undefined;
  const budget = enumBudget();
  let patterns: KeyPatterns | undefined;
  const walk = (current: unknown, at: Schema, path: string, depth: number): unknown => {
    if (depth > 32 || repairs.length > MAX_REPAIRS) return current;
    const declared = refTarget(at, schema);
    // A value of an optional field's union with null is repaired as its one other branch says.
    const sub = (current !== null && nullableBranch(declared, schema)) || declared;
    let next = current;
    if (!valueFits(next, sub)) {
      const found = candidates(next, sub, depth, maxDepth, sideEffects, budget);
      if ('refused' in found) refused.push(`${path || '/'}: ${found.refused}`);
      else if (found.length === 1) {
        repairs.push(`repaired ${path || '/'}: ${JSON.stringify(next)} -> ${JSON.stringify(found[0]!.value)} (${found[0]!.what})`);
        next = found[0]!.value;
      } else {
        const meant = didYouMean(next, sub, path || '/', found, budget);
        if (meant !== undefined) {
          refused.push(meant.line);
          suggestion ??= meant.suggestion;
        }
      }
    }
    // The names the object's schema allows when it allows no others, its `$ref`s' and `allOf` parts' too.
    const closed = isObject(next) ? (closedNames(at, schema) ?? (sub === at ? undefined : closedNames(sub, schema))) : undefined;
    // The properties of the object's schema, its `allOf` parts' and `$ref` targets' too.
    const { properties: props, required } = isObject(next) ? partProperties(sub, schema) : NO_PROPERTIES;
    if (isObject(next) && (props.size > 0 || hasMemberSchemas(sub) || closed !== undefined)) {
      const copy: Record<string, unknown> = { ...next };
      // A property the schema does not allow, misspelling one it declares (`citty` for `city`).
      if (closed !== undefined) repairs.push(...renameNearKeys(copy, closed, path, sideEffects));
      for (const [key, propSchema] of props) {
        // Own keys only, as validation reads them: `in` saw Object.prototype's `constructor` or
        // `toString` as a value sent, and a repair made `"constructor":[null]` of it.
        if (!Object.hasOwn(copy, key)) continue;
        // The default is the property's own, the one validation fills (never its $ref target's).
        if (copy[key] === null && !required.has(key) && !valueFits(null, refTarget(propSchema, schema))) {
          if (sideEffects && Object.hasOwn(propSchema, 'default')) {
            const fallback = JSON.stringify(propSchema.default);
            refused.push(`${path}/${key}: null not dropped, as the default ${fallback} would take its place (send the value meant, or leave the field out)`);
            continue;
          }
          delete copy[key];
          repairs.push(`repaired ${path}/${key}: null dropped (optional field)`);
          continue;
        }
        copy[key] = walk(copy[key], propSchema, `${path}/${key}`, depth + 1);
      }
      if (hasMemberSchemas(sub)) {
        patterns ??= keyPatterns();
        for (const key of Object.keys(copy)) {
          const memberSub = memberSchema(key, sub, patterns);
          if (memberSub !== undefined) copy[key] = walk(copy[key], memberSub, `${path}/${key}`, depth + 1);
        }
      }
      return copy;
    }
    if (Array.isArray(next) && isObject(sub.items)) {
      return next.map((item, i) => walk(item, sub.items as Schema, `${path}/${i}`, depth + 1));
    }
    return next;
  };
  let repaired: unknown;
  try {
    repaired = walk(value, schema, '', 0);
  } finally {
    patterns?.close();
  }
  if (budget.spent) refused.push(`enum values past ${MAX_ENUM_COMPARISONS} comparisons with allowed values were not checked for misspellings`);
  if (repairs.length > MAX_REPAIRS) {
    refused.unshift(`more than ${MAX_REPAIRS} values would need repair: none was repaired (send the values as the schema says)`);
    return { value, repairs: [], refused };
  }
  return suggestion === undefined ? { value: repaired, repairs, refused } : { value: repaired, repairs, refused, suggestion };
}

/** What `repairArguments` made of arguments; see there. */
export interface RepairResult {
  readonly value: unknown;
  readonly repairs: string[];
  readonly refused: string[];
  readonly suggestion?: string;
}
