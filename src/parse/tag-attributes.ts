import * as markerFinder from './marker-finder';

// Bound once: under some CommonJS transforms (the test runner's) every call through an import
// binding goes through a getter, and this runs once per tag.
const { skipSpace } = markerFinder;

/** A tag's attributes from its name to its `>` no longer than this: 1 KiB. */
const MAX_ATTRIBUTES = 1024;

/** How reading a tag's attributes ended: the attributes and the end of the tag, or broken at `at`. */
export type TagAttributes =
  | { readonly kind: 'tag'; readonly attributes: ReadonlyMap<string, string>; readonly end: number }
  | { readonly kind: 'broken'; readonly at: number };

/**
 * The attributes of the tag whose name ends at `from` (`<｜DSML｜invoke` then ` name="f">`): each
 * after whitespace, `key="value"`, then `>` after optional whitespace. A value holds no `"`, `<`
 * or line end, and all of it is at most `MAX_ATTRIBUTES` characters, so reading stops before any
 * other tag: a tag broken at `at` (prose, or text cut off) leaves the search to go on there,
 * having read no character that a later tag may begin with.
 */
export function readTagAttributes(text: string, from: number): TagAttributes {
  const attributes = new Map<string, string>();
  const read = scanTag(text, from, (keyStart, keyEnd, valueStart, valueEnd) => attributes.set(text.slice(keyStart, keyEnd), text.slice(valueStart, valueEnd)));
  return read.kind === 'broken' ? read : { kind: 'tag', attributes, end: read.end };
}

/**
 * Whether the tag whose name ends at `from` is whole, as `readTagAttributes` reads it, with an
 * attribute `name`: building nothing, for the checks made at every closing tag of a value.
 */
export function tagHasAttribute(text: string, from: number, name: string): boolean {
  let found = false;
  const read = scanTag(text, from, (keyStart, keyEnd) => {
    if (keyEnd - keyStart === name.length && text.startsWith(name, keyStart)) found = true;
  });
  return read.kind === 'tag' && found;
}

/** Reads a tag's attributes as `readTagAttributes` describes, handing each to `visit`. */
function scanTag(text: string, from: number, visit: (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number) => void): { readonly kind: 'tag'; readonly end: number } | { readonly kind: 'broken'; readonly at: number } {
  const limit = Math.min(from + MAX_ATTRIBUTES, text.length);
  for (let pos = from; ; ) {
    const next = skipSpace(text, pos, limit);
    if (next < limit && text.charCodeAt(next) === 0x3e) return { kind: 'tag', end: next + 1 };
    if (next === pos) return { kind: 'broken', at: next };
    let keyEnd = next;
    while (keyEnd < limit && isKeyChar(text.charCodeAt(keyEnd))) keyEnd++;
    if (keyEnd === next || text.charCodeAt(keyEnd) !== 0x3d || text.charCodeAt(keyEnd + 1) !== 0x22) return { kind: 'broken', at: keyEnd };
    const valueStart = keyEnd + 2;
    let valueEnd = valueStart;
    while (valueEnd < limit && isValueChar(text.charCodeAt(valueEnd))) valueEnd++;
    if (valueEnd >= limit || text.charCodeAt(valueEnd) !== 0x22) return { kind: 'broken', at: valueEnd < limit ? valueEnd : limit };
    visit(next, keyEnd, valueStart, valueEnd);
    pos = valueEnd + 1;
  }
}

/** A letter, digit, `_` or `-`. */
function isKeyChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2d;
}

function isValueChar(c: number): boolean {
  return c !== 0x22 && c !== 0x3c && c !== 0x0a && c !== 0x0d;
}
