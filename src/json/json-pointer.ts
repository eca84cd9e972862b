/** An array index as RFC 6901 writes it: no sign, no leading zero. */
const INDEX = /^(?:0|[1-9][0-9]*)$/;

/**
 * Reads the value at an RFC 6901 JSON pointer; `undefined` when the path does not exist. In an
 * array only an index below its length names a value (`-`, past the end, names none): `length`
 * is no member of a JSON array, and `/to/length` resolved to the array's length, so two emails to
 * different addresses shared an idempotency key and the second was replayed, never sent.
 */
export function readPointer(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  if (!pointer.startsWith('/')) return undefined;
  let current: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (current === null || typeof current !== 'object') return undefined;
    if (Array.isArray(current)) {
      if (!INDEX.test(token)) return undefined;
      const index = Number(token);
      if (index >= current.length) return undefined;
      current = current[index] as unknown;
    } else {
      if (!Object.prototype.hasOwnProperty.call(current, token)) return undefined;
      current = (current as Record<string, unknown>)[token];
    }
  }
  return current;
}

/** True when `pointer` is a syntactically valid JSON pointer. */
export function isJsonPointer(pointer: string): boolean {
  return pointer === '' || (pointer.startsWith('/') && !/~[^01]|~$/.test(pointer));
}
