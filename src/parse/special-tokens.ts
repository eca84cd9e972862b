import * as charClasses from './char-classes';
import { createMarkerFinder } from './marker-finder';

// Bound once: under some CommonJS transforms (the test runner's) every call through an import
// binding goes through a getter, and this runs once per character.
const { isWhitespace } = charClasses;

/**
 * The spellings of one special token: `<｜tool▁sep｜>` (DeepSeek's fullwidth bars, U+FF5C) and
 * `<|tool▁sep|>` (ASCII bars, as some servers and logs write it), or Kimi K2's
 * `<|tool_calls_section_begin|>` and `<|tool_call_section_begin|>`. A token skipped by the
 * length of its first spelling (a call's opening token, a separator) has all of one length.
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
  const spelling = spellings.find((s) => pos - s.length >= floor && text.startsWith(s, pos - s.length));
  return spelling === undefined ? at : pos - spelling.length;
}
