import * as charClasses from './char-classes';

// Bound once: under some CommonJS transforms (the test runner's) every call through an import
// binding goes through a getter, and these run once per character or candidate.
const { isWhitespace } = charClasses;

/** Successive occurrences of one marker in a text. */
export interface MarkerFinder {
  /**
   * The first occurrence at or after `from`, or -1. Callers must pass non-decreasing `from`
   * values; in exchange no character is searched twice, so a scan stays linear.
   */
  next(from: number): number;
}

/** A finder for `marker` in `text` that remembers its last answer. */
export function createMarkerFinder(text: string, marker: string): MarkerFinder {
  let found = -1;
  let searchedFrom = -1;
  let exhausted = false;
  return {
    next(from: number): number {
      if (exhausted) return -1;
      if (searchedFrom >= 0 && searchedFrom <= from && found >= from) return found;
      searchedFrom = from;
      found = text.indexOf(marker, from);
      if (found < 0) exhausted = true;
      return found;
    },
  };
}

/** The index of the first non-whitespace character at or after `from`, or `limit`. */
export function skipSpace(text: string, from: number, limit: number): number {
  let pos = from;
  while (pos < limit && isWhitespace(text.charCodeAt(pos))) pos++;
  return pos;
}
