const tokensOf = (pointer: string) => pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));

type Container = Record<string, unknown> | unknown[];
const isContainer = (v: unknown): v is Container => v !== null && typeof v === 'object';

/**
 * Sets `key` of `record` as an own data property: assigned, a key named `__proto__` (which
 * JSON.parse makes an own key, as the arguments hold it) would set the object's prototype instead.
 */
const defineKey = (record: Record<string, unknown>, key: string, value: unknown) => Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });

function parentOf(doc: unknown, tokens: readonly string[], create: boolean): Container | undefined {
  let current = doc;
  for (const token of tokens.slice(0, -1)) {
    if (!isContainer(current)) return undefined;
    const record = current as Record<string, unknown>;
    if (!Object.hasOwn(record, token)) {
      if (!create || Array.isArray(current)) return undefined;
      defineKey(record, token, {});
    }
    current = record[token];
  }
  return isContainer(current) ? current : undefined;
}

/**
 * Writes `value` at a JSON pointer of `doc` in place, creating missing parent objects; `-` appends
 * to an array. Returns false when the path crosses a value that is not an object or array.
 */
export function setAtPointer(doc: unknown, pointer: string, value: unknown): boolean {
  const tokens = tokensOf(pointer);
  const parent = parentOf(doc, tokens, true);
  const last = tokens[tokens.length - 1]!;
  if (!parent) return false;
  if (Array.isArray(parent)) {
    if (last === '-') parent.push(value);
    else if (/^(0|[1-9]\d*)$/.test(last) && Number(last) <= parent.length) parent[Number(last)] = value;
    else return false;
    return true;
  }
  defineKey(parent, last, value);
  return true;
}

/** Removes the value at a JSON pointer of `doc` in place; a missing path is left alone. */
export function removeAtPointer(doc: unknown, pointer: string): void {
  const tokens = tokensOf(pointer);
  const parent = parentOf(doc, tokens, false);
  const last = tokens[tokens.length - 1]!;
  if (!parent) return;
  if (Array.isArray(parent)) {
    if (/^(0|[1-9]\d*)$/.test(last) && Number(last) < parent.length) parent.splice(Number(last), 1);
  } else delete parent[last];
}
