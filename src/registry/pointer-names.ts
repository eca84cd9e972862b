import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { closedNames } from '../arguments/closed-names';
import { nearDeclared } from '../arguments/near-keys';
import { alwaysParts } from '../arguments/schema-parts';
import { shortened } from '../pipeline/bound-result';
import { parseSchemaText } from './schema-codegen';
import { isObject, type Schema } from './schema-index';

/**
 * The longest schema text read for its property names: past it the compile refuses the schema
 * (limits.max_schema_bytes is 256 KiB by default, at most a request), so nothing is lost.
 */
const MAX_READ_CHARS = 4 * 1024 * 1024;
/** The most declared names a refusal lists. */
const SHOWN_NAMES = 5;
/** A name quoted in a message: a schema's names may be long. */
export const quoted = (text: string) => JSON.stringify(shortened(text, 100));

/** What each pointer of a spec is read for, and what a pointer reading nothing there does. */
const POINTERS = [
  ['primary_parameter', (spec: ToolSpec) => spec.primaryParameter, 'loop detection would read nothing there and take every call of the tool for the same operation (distinct calls answering alike end the turn LOOP_DETECTED)'],
  ['resource_key', (spec: ToolSpec) => spec.resourceKey, 'a parallel turn would read no resource there, so calls on one resource would run at once'],
] as const;

/** The property names an input schema declares, as a pointer into its arguments is checked against them. */
export interface SchemaNames {
  readonly declared: readonly string[];
  /** A part of the schema has `patternProperties`: a pattern may declare any name. */
  readonly patterned: boolean;
  /** The only names its properties allow (closed-names.ts), or undefined when others are allowed. */
  readonly closed: readonly string[] | undefined;
}

/** The names `inputSchema` declares, or undefined when it declares none or cannot be read. */
export function schemaNames(inputSchema: string): SchemaNames | undefined {
  if (inputSchema.length > MAX_READ_CHARS) return undefined;
  let root: Schema;
  try {
    root = parseSchemaText(inputSchema, Number.POSITIVE_INFINITY);
  } catch {
    return undefined;
  }
  const parts = alwaysParts(root, root) ?? [root];
  const declared = [...new Set(parts.flatMap((part) => (isObject(part.properties) ? Object.keys(part.properties) : [])))];
  if (declared.length === 0) return undefined;
  return { declared, patterned: parts.some((part) => isObject(part.patternProperties)), closed: closedNames(root, root) };
}

/** A pointer whose first token names no declared property: the name, and the pointer meant (a near miss) or the names allowed (a closed schema). */
export interface UndeclaredName {
  readonly name: string;
  readonly meant?: string;
  readonly allowed?: string;
  /** The names an open schema declares (policy-pointer-warnings.ts: a warning names them). */
  readonly declared?: string;
}

/** A JSON pointer's first token, decoded (`~1` is `/`, `~0` is `~`), and its other tokens as written. */
export function firstToken(pointer: string): { readonly name: string; readonly rest: readonly string[] } {
  const [first = '', ...rest] = pointer.slice(1).split('/');
  return { name: first.replace(/~1/g, '/').replace(/~0/g, '~'), rest };
}

/** The pointer whose first token is `name` (encoded) and whose others are `rest`. */
export const withFirstToken = (name: string, rest: readonly string[]): string => ['', name.replace(/~/g, '~0').replace(/\//g, '~1'), ...rest].join('/');

/**
 * What is wrong with `pointer` (`/a/b`) against `names`: its first token names no declared
 * property, and is a near miss of one (near-keys.ts: one typo, other case or separators; unless a
 * part has `patternProperties`) or the schema allows no other name. Undefined otherwise.
 */
export function undeclaredName(names: SchemaNames, pointer: string): UndeclaredName | undefined {
  const { name, rest } = firstToken(pointer);
  if (names.declared.includes(name)) return undefined;
  const near = names.patterned ? undefined : nearDeclared(name, names.declared, {});
  if (near !== undefined) return { name, meant: withFirstToken(near, rest) };
  const closed = names.closed;
  if (closed === undefined || closed.length === 0) return undefined;
  const more = closed.length > SHOWN_NAMES ? `, and ${closed.length - SHOWN_NAMES} more` : '';
  return { name, allowed: `${closed.slice(0, SHOWN_NAMES).map(quoted).join(', ')}${more}` };
}

/**
 * The refusal of a `primary_parameter` or `resource_key` whose first token names no property the
 * tool's input schema declares, as words after `tool "NAME": `; or undefined. Either was taken as
 * written, and read nothing in any call: a misspelt `primary_parameter` (`/qury` for `/query`) made
 * every call the same operation to loop detection, so 11 distinct queries answering alike ended
 * the turn ABORTED LOOP_DETECTED. Refused when the token is a near miss of a declared property
 * (near-keys.ts: one typo, other case or separators; `did you mean "/query"?`), unless a part of the
 * schema has `patternProperties` (a pattern may declare it), and, whatever the token, when the
 * schema's properties are closed (additionalProperties or unevaluatedProperties false, read across
 * `$ref` and `allOf` as closed-names.ts reads them) and declare some. Other schemas (an open
 * object, an `anyOf` of shapes, a `$ref` that does not resolve) are taken as they are. The
 * schema is parsed only when a pointer is set.
 */
export function pointerNameProblem(spec: ToolSpec): string | undefined {
  const set = POINTERS.filter(([, of]) => of(spec).startsWith('/'));
  if (set.length === 0) return undefined;
  const names = schemaNames(spec.inputSchema);
  if (names === undefined) return undefined;
  for (const [field, of, effect] of set) {
    const pointer = of(spec);
    const problem = undeclaredName(names, pointer);
    if (problem === undefined) continue;
    const at = `${field} ${quoted(pointer)} names the property ${quoted(problem.name)}, which input_schema does not declare`;
    if (problem.meant !== undefined) return `${at}: did you mean ${quoted(problem.meant)}? As written, ${effect}`;
    return `${at} and allows no other (additionalProperties or unevaluatedProperties false), so ${effect}; point it at a property it declares: ${problem.allowed}`;
  }
  return undefined;
}
