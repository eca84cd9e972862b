const tokensOf = (pointer: string) => pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));

type Container = Record<string, unknown> | unknown[];
const isContainer = (v: unknown): v is Container => v !== null && typeof v === 'object';

function parentOf(doc: unknown, tokens: readonly string[], create: boolean): Container | undefined {
  let current = doc;
  for (const token of tokens.slice(0, -1)) {
    if (!isContainer(current) || token === '__proto__') return undefined;
    const record = current as Record<string, unknown>;
    if (!Object.prototype.hasOwnProperty.call(record, token)) {
      if (!create || Array.isArray(current)) return undefined;
      record[token] = {};
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
  if (last === '__proto__') return false;
  parent[last] = value;
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
