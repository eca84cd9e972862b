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
const quoted = (text: string) => JSON.stringify(shortened(text, 100));

/** What each pointer of a spec is read for, and what a pointer reading nothing there does. */
const POINTERS = [
  ['primary_parameter', (spec: ToolSpec) => spec.primaryParameter, 'loop detection would read nothing there and take every call of the tool for the same operation (distinct calls answering alike end the turn LOOP_DETECTED)'],
  ['resource_key', (spec: ToolSpec) => spec.resourceKey, 'a parallel turn would read no resource there, so calls on one resource would run at once'],
] as const;

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
  if (set.length === 0 || spec.inputSchema.length > MAX_READ_CHARS) return undefined;
  let root: Schema;
  try {
    root = parseSchemaText(spec.inputSchema, Number.POSITIVE_INFINITY);
  } catch {
    return undefined;
  }
  const parts = alwaysParts(root, root) ?? [root];
  const declared = [...new Set(parts.flatMap((part) => (isObject(part.properties) ? Object.keys(part.properties) : [])))];
  if (declared.length === 0) return undefined;
  const patterned = parts.some((part) => isObject(part.patternProperties));
  const closed = closedNames(root, root);
  for (const [field, of, effect] of set) {
    const pointer = of(spec);
    const [first = '', ...rest] = pointer.slice(1).split('/');
    const name = first.replace(/~1/g, '/').replace(/~0/g, '~');
    if (declared.includes(name)) continue;
    const near = patterned ? undefined : nearDeclared(name, declared, {});
    const at = `${field} ${quoted(pointer)} names the property ${quoted(name)}, which input_schema does not declare`;
    if (near !== undefined) {
      const meant = ['', near.replace(/~/g, '~0').replace(/\//g, '~1'), ...rest].join('/');
      return `${at}: did you mean ${quoted(meant)}? As written, ${effect}`;
    }
    if (closed !== undefined && closed.length > 0) {
      const names = closed.slice(0, SHOWN_NAMES).map(quoted).join(', ');
      const more = closed.length > SHOWN_NAMES ? `, and ${closed.length - SHOWN_NAMES} more` : '';
      return `${at} and allows no other (additionalProperties or unevaluatedProperties false), so ${effect}; point it at a property it declares: ${names}${more}`;
    }
  }
  return undefined;
}
