import type Ajv2020 from 'ajv/dist/2020';
import { _, str, type KeywordErrorDefinition } from 'ajv/dist/2020';
import { canonicalJson } from '../json';

/**
 * `uniqueItems` checked in linear time. Ajv compares every pair of items with a deep equality
 * when the items are objects, arrays or untyped (quadratic): 150,000 untyped numbers (917 KB)
 * took 31 s, 20,000 `{"id": n}` rows 7.8 s, on the event loop every tenant shares. Here each
 * item's canonical JSON (keys sorted, so key order never matters, as JSON Schema's equality
 * wants) goes into a Set: one pass, as many comparisons as items.
 */
export function uniqueIndexes(items: readonly unknown[]): { i: number; j: number } | undefined {
  const seen = new Map<string, number>();
  for (let i = 0; i < items.length; i++) {
    const key = canonicalJson(items[i]);
    const j = seen.get(key);
    if (j !== undefined) return { i, j };
    seen.set(key, i);
  }
  return undefined;
}

/** What the source of a compiled `uniqueItems` requires for {@link uniqueIndexes}; see schema-module.ts. */
export const UNIQUE_ITEMS_MODULE = 'dispatch:unique-items';

// Ajv's own error, word for word: the keyword, its params, its message and (verbose) the schema holding it.
const error: KeywordErrorDefinition = {
  message: ({ params: { i, j } }) => str`must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
  params: ({ params: { i, j } }) => _`{i: ${i}, j: ${j}}`,
};

/**
 * Replaces Ajv's quadratic `uniqueItems` with the linear check above, as code calling it (which
 * Ajv's standalone code can hold: a `validate` function keyword it cannot).
 */
export function useLinearUniqueItems(ajv: Ajv2020): void {
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({
    keyword: 'uniqueItems',
    type: 'array',
    schemaType: 'boolean',
    error,
    code(cxt) {
      if (!cxt.schema) return;
      const { gen } = cxt;
      const find = gen.scopeValue('func', { ref: uniqueIndexes, code: _`require(${UNIQUE_ITEMS_MODULE}).uniqueIndexes` });
      const duplicate = gen.const('duplicate', _`${find}(${cxt.data})`);
      cxt.setParams({ i: _`${duplicate}.i`, j: _`${duplicate}.j` });
      cxt.fail(_`${duplicate} !== undefined`);
    },
  });
}
