import { isObject, type Schema, type SchemaIndex } from './schema-index';

/** The most pointers of a loop a message names. */
const SHOWN_POINTERS = 5;

/**
 * A chain of `$ref`s in the schema that comes back to a schema of its own, as a message, or
 * undefined. Each `$ref` passes the same value on, so validating would never end; and Ajv follows
 * a `$ref` to a schema that is only a `$ref` while compiling, so `{"$ref":"#/$defs/a","$defs":{"a":
 * {"$ref":"#/$defs/a"}}}` overflowed its stack ("Maximum call stack size exceeded") before the
 * cost check could name the loop. Looked for everywhere in the schema, used or not.
 */
export function refLoop(index: SchemaIndex): string | undefined {
  const cleared = new Set<object>();
  for (const start of index.schemas()) {
    const chain: Schema[] = [];
    const onChain = new Set<object>();
    for (let at: unknown = start; isObject(at) && typeof at.$ref === 'string' && !cleared.has(at); at = index.resolve(at.$ref, at)) {
      if (onChain.has(at)) return loopMessage(index, chain.slice(chain.indexOf(at)));
      chain.push(at);
      onChain.add(at);
    }
    for (const schema of chain) cleared.add(schema);
  }
  return undefined;
}

function loopMessage(index: SchemaIndex, loop: readonly Schema[]): string {
  const shown = loop.slice(0, SHOWN_POINTERS).map((schema) => index.shown(schema));
  const rest = loop.length > SHOWN_POINTERS ? ` -> ... (${loop.length} in all)` : '';
  return `the $ref chain ${shown.join(' -> ')}${rest} -> ${index.shown(loop[0]!)} comes back where it started: each passes the same value on to the next, so validating would never end`;
}
