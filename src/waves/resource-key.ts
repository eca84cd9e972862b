import { canonicalJson, readPointer } from '../json';

/**
 * The resource a call touches: the value at `pointer` in its arguments, as canonical JSON, so
 * `{"a":1,"b":2}` and `{"b":2,"a":1}` name the same resource. Undefined when the tool names no
 * pointer, the arguments are not JSON, or the path is absent: such a call conflicts with no other.
 */
export function resourceKeyOf(argumentsText: string, pointer: string): string | undefined {
  if (pointer === '') return undefined;
  let document: unknown;
  try {
    document = JSON.parse(argumentsText);
  } catch {
    return undefined;
  }
  return resourceKeyIn(document, pointer);
}

/** The resource key of arguments already parsed (and repaired): the canonical JSON at `pointer`. */
export function resourceKeyIn(args: unknown, pointer: string): string | undefined {
  if (pointer === '') return undefined;
  const value = readPointer(args, pointer);
  return value === undefined ? undefined : canonicalJson(value);
}
