import type Ajv2020 from 'ajv/dist/2020';
import { _, type KeywordErrorDefinition } from 'ajv/dist/2020';
import { canonicalJson } from '../json';

/**
 * `enum` checked by lookup. Ajv compares a value with every allowed value in turn, so an enum
 * under `items` costs its length per item: 10,000 `{"v": n}` values against 100,000 items (800 KB
 * of arguments) took 27 s, 30,000 numbers 3 s, on the event loop every tenant shares. Here the
 * allowed values go once into Sets (objects and arrays by canonical JSON, keys sorted, so key order
 * never matters, as JSON Schema's equality wants): one lookup per value.
 */
interface EnumLookup {
  /** Strings, numbers, booleans and null (a Set's SameValueZero: `1` is not `"1"`, `-0` is `0`). */
  readonly scalars: ReadonlySet<unknown>;
  /** Objects and arrays, by canonical JSON. */
  readonly containers: ReadonlySet<string>;
  /** The longest of `containers`: a larger value is none of them, and is not serialised. */
  readonly longest: number;
}

/** Each enum's lookup, by its array in the schema (the compiled code passes the same one every call). */
const lookups = new WeakMap<readonly unknown[], EnumLookup>();

function lookupOf(allowed: readonly unknown[]): EnumLookup {
  let lookup = lookups.get(allowed);
  if (lookup === undefined) {
    const scalars = new Set<unknown>();
    const containers = new Set<string>();
    let longest = 0;
    for (const value of allowed) {
      if (value === null || typeof value !== 'object') scalars.add(value);
      else {
        const text = canonicalJson(value);
        containers.add(text);
        if (text.length > longest) longest = text.length;
      }
    }
    lookup = { scalars, containers, longest };
    lookups.set(allowed, lookup);
  }
  return lookup;
}

/** Whether `data` equals one of `allowed` (JSON values), in time linear in the smaller of `data` and the longest allowed value. */
export function inEnum(data: unknown, allowed: readonly unknown[]): boolean {
  const lookup = lookupOf(allowed);
  if (data === null || typeof data !== 'object') return lookup.scalars.has(data);
  return lookup.containers.size > 0 && !longerThan(data, lookup.longest) && lookup.containers.has(canonicalJson(data));
}

/**
 * Whether the JSON text of `value` surely has more than `max` characters: counts what it at least
 * takes (a string its characters and quotes, a number one digit), stopping once past `max`, so a
 * large value under an enum of small objects costs `max`, not its size.
 */
function longerThan(value: unknown, max: number): boolean {
  let left = max;
  const take = (item: unknown): boolean => {
    if (typeof item === 'string') left -= item.length + 2;
    else if (item === null || typeof item !== 'object') left -= item === false ? 5 : typeof item === 'number' ? 1 : 4;
    else if (Array.isArray(item)) {
      left -= 2 + Math.max(item.length - 1, 0);
      for (let i = 0; i < item.length && left >= 0; i++) if (take(item[i])) return true;
    } else {
      const keys = Object.keys(item);
      left -= 2 + Math.max(keys.length - 1, 0);
      for (let i = 0; i < keys.length && left >= 0; i++) {
        left -= keys[i]!.length + 3;
        if (take((item as Record<string, unknown>)[keys[i]!])) return true;
      }
    }
    return left < 0;
  };
  return take(value);
}

/** What the source of a compiled `enum` requires for {@link inEnum}; see schema-module.ts. */
export const ENUM_MODULE = 'dispatch:enum';

// Ajv's own error, word for word: the keyword, its params, its message and (verbose) the schema holding it.
const error: KeywordErrorDefinition = {
  message: 'must be equal to one of the allowed values',
  params: ({ schemaCode }) => _`{allowedValues: ${schemaCode}}`,
};

/**
 * Replaces Ajv's `enum` (a comparison per allowed value) with the lookup above, as code calling
 * it; `$data` stays off, as everywhere in the compiler.
 */
export function useLinearEnum(ajv: Ajv2020): void {
  ajv.removeKeyword('enum');
  ajv.addKeyword({
    keyword: 'enum',
    schemaType: 'array',
    error,
    code(cxt) {
      const { gen, schema, schemaCode, data } = cxt;
      if ((schema as unknown[]).length === 0) throw new Error('enum must have non-empty array');
      const find = gen.scopeValue('func', { ref: inEnum, code: _`require(${ENUM_MODULE}).inEnum` });
      cxt.pass(_`${find}(${data}, ${schemaCode})`);
    },
  });
}
