import { isObject, type SchemaIndex } from './schema-index';

/** The most members of an anyOf or oneOf a message names. */
const SHOWN_MEMBERS = 3;

/**
 * The refusal of an input schema that can never accept a JSON object, or undefined. A tool's
 * arguments always are one (dispatch parses them so), so such a schema loaded and then refused
 * every call INVALID_ARGUMENTS. Read from what settles it at the root: its `type`, `const`, `enum`,
 * a `false` or `not: {}`, and what the root applies in place, each of which must pass (`$ref`,
 * `allOf`) or one of which must (`anyOf`, `oneOf`: refused when every member refuses). Each schema
 * is read once (a `$ref` loop ends there), so the work is linear in the schema.
 */
export function rootObjectProblem(index: SchemaIndex): string | undefined {
  const why = refusal(index.root, '#', index, new Set());
  return why === undefined ? undefined : `a tool's arguments are a JSON object; input_schema's ${why} does not allow one`;
}

/** What in `node` (at `pointer`) refuses every object, in words, or undefined. */
function refusal(node: unknown, pointer: string, index: SchemaIndex, seen: Set<object>): string | undefined {
  const where = pointer === '#' ? '' : ` at ${pointer}`;
  if (node === false) return `subschema false${where}`;
  if (!isObject(node) || seen.has(node)) return undefined;
  seen.add(node);
  const { type } = node;
  if (typeof type === 'string' ? type !== 'object' : Array.isArray(type) && !type.includes('object')) return `type ${JSON.stringify(type)}${where}`;
  if (Object.hasOwn(node, 'const') && !isObject(node.const)) return `const${where}`;
  if (Array.isArray(node.enum) && !node.enum.some(isObject)) return `enum${where}`;
  if (node.not === true || (isObject(node.not) && Object.keys(node.not).length === 0)) return `not: ${JSON.stringify(node.not)}${where}`;
  const at = (member: unknown, fallback: string) => (isObject(member) ? index.shown(member) : fallback);
  if (typeof node.$ref === 'string') {
    const target = index.resolve(node.$ref, node);
    const why = refusal(target, at(target, node.$ref), index, seen);
    if (why !== undefined) return why;
  }
  const members = (keyword: string) => (Array.isArray(node[keyword]) ? (node[keyword] as unknown[]) : []);
  for (const [i, member] of members('allOf').entries()) {
    const why = refusal(member, at(member, `${pointer}/allOf/${i}`), index, seen);
    if (why !== undefined) return why;
  }
  for (const keyword of ['anyOf', 'oneOf']) {
    const list = members(keyword);
    const whys: string[] = [];
    for (const [i, member] of list.entries()) {
      // A member read already (shared through $ref) settles nothing here: taken as allowing one.
      const why = refusal(member, at(member, `${pointer}/${keyword}/${i}`), index, seen);
      if (why === undefined) break;
      whys.push(why);
    }
    if (list.length > 0 && whys.length === list.length) {
      const more = whys.length > SHOWN_MEMBERS ? `; and ${whys.length - SHOWN_MEMBERS} more` : '';
      return `${keyword}${where} (none of its members does: ${whys.slice(0, SHOWN_MEMBERS).join('; ')}${more})`;
    }
  }
  return undefined;
}
