import * as charClasses from './char-classes';
import * as markerFinder from './marker-finder';

// Bound once: under some CommonJS transforms (the test runner's) every call through an import
// binding goes through a getter, and these run once per character or candidate.
const { isWordChar } = charClasses;
const { skipSpace } = markerFinder;

/**
 * Longest first key the pre-check reads. Calls' keys are short (`name`, `function`, `role`);
 * a longer first key makes the object a non-call without parsing it.
 */
const MAX_FIRST_KEY = 128;

/**
 * Whether JSON at `pos` may begin a call: an object whose first key (quoted or not) is followed
 * by a colon, or an array whose first element is such an object. A cheap, bounded look ahead
 * that spares the parser the `{` and `[` of prose and of hostile input.
 */
export function mayStartCallJson(text: string, pos: number, limit: number): boolean {
  const c = text.charCodeAt(pos);
  if (c === 0x5b) {
    const first = skipSpace(text, pos + 1, limit);
    return text.charCodeAt(first) === 0x7b && mayOpenCallObject(text, first, limit);
  }
  return c === 0x7b && mayOpenCallObject(text, pos, limit);
}

function mayOpenCallObject(text: string, pos: number, limit: number): boolean {
  let p = skipSpace(text, pos + 1, limit);
  if (p >= limit) return false;
  const quote = text.charCodeAt(p);
  if (quote === 0x22 || quote === 0x27) {
    // Not Math.min: this runs per candidate, and some test environments make Math calls slow.
    const end = p + 1 + MAX_FIRST_KEY < limit ? p + 1 + MAX_FIRST_KEY : limit;
    p++;
    while (p < end && text.charCodeAt(p) !== quote) p += text.charCodeAt(p) === 0x5c ? 2 : 1;
    if (p >= end) return false;
    p++;
  } else if (isWordChar(quote)) {
    while (p < limit && isWordChar(text.charCodeAt(p))) p++;
  } else {
    return false;
  }
  p = skipSpace(text, p, limit);
  return p < limit && text.charCodeAt(p) === 0x3a;
}

/**
 * Whether the key written at `text[start, end)`, quoted or not, is a call's: `name`, `function`,
 * `arguments`, `parameters` or Cohere's `tool_name`. Runs for every key a parse reads, so compares in place.
 */
export function isCallKey(text: string, start: number, end: number): boolean {
  const c = text.charCodeAt(start);
  const quoted = c === 0x22 || c === 0x27;
  const from = quoted ? start + 1 : start;
  switch (quoted ? end - start - 2 : end - start) {
    case 4:
      return text.startsWith('name', from);
    case 8:
      return text.startsWith('function', from);
    case 9:
      return text.startsWith('arguments', from) || text.startsWith('tool_name', from);
    case 10:
      return text.startsWith('parameters', from);
    default:
      return false;
  }
}
