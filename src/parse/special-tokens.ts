import * as charClasses from './char-classes';
import { createMarkerFinder } from './marker-finder';

// Bound once: under some CommonJS transforms (the test runner's) every call through an import
// binding goes through a getter, and this runs once per character.
const { isWhitespace } = charClasses;

/**
 * The spellings of one special token, all of one length: `<｜tool▁sep｜>` (DeepSeek's fullwidth
 * bars, U+FF5C) and `<|tool▁sep|>` (ASCII bars, as some servers and logs write it).
 */
export type Spellings = readonly string[];

/** Successive occurrences of any spelling of a token; see `MarkerFinder` for the contract on `from`. */
export interface TokenFinder {
  next(from: number): number;
}

/** A finder for the first of `spellings` at or after a position: one marker finder each, so linear. */
export function createTokenFinder(text: string, spellings: Spellings): TokenFinder {
  const finders = spellings.map((spelling) => createMarkerFinder(text, spelling));
  return {
    next(from: number): number {
      let first = -1;
      for (const finder of finders) {
        const at = finder.next(from);
        if (at >= 0 && (first < 0 || at < first)) first = at;
      }
      return first;
    },
  };
}

/** Whether a spelling of the token begins at `pos`. */
export function tokenAt(text: string, pos: number, spellings: Spellings): boolean {
  return spellings.some((spelling) => text.startsWith(spelling, pos));
}

/**
 * Where a token ending just before `at`, but for whitespace, begins (a section's or wrapper's
 * opening token before a call's), or `at` when there is none at or after `floor`.
 */
export function tokenBefore(text: string, at: number, floor: number, spellings: Spellings): number {
  let pos = at;
  while (pos > floor && isWhitespace(text.charCodeAt(pos - 1))) pos--;
  const length = spellings[0]?.length ?? 0;
  return pos - length >= floor && tokenAt(text, pos - length, spellings) ? pos - length : at;
}
