import { levenshtein } from '../json';

/**
 * Whether `value` is a misspelling of the enum value `allowed`, so that lenient repair may put
 * `allowed` in its place. Both are read as words (split at anything not a letter or digit, at a
 * lower-case letter followed by a capital, and between letters and digits), case-insensitively.
 * It is the same words with other separators, or one typo in one word, the other words the same:
 *   - one letter added, dropped or replaced, in a word of 3 letters or more (`activte`,
 *     `deleete`, `metrc`, `delate`), or two adjacent letters swapped in one of 6 or more
 *     (`cancle`, `pubilsh`);
 *   - never in the first letter (`deactivate` is not `activate`, `import` not `export`,
 *     `unpublish` not `publish`, `sort_ascending` not `sort_descending`: a prefix added or
 *     taken off turns a word into its opposite);
 *   - never in a number (`tier2` is not `tier1`, `v1` not `v2`).
 * Two independent edits, once allowed as "Levenshtein 2", are refused: they turned `min_price`
 * into `max_price`, `price_asc` into `price_desc`, `restart` into `restore`. A refused repair
 * costs the model one more call with the schema's message; a wrong one may act on a side effect.
 *
 * For a tool with side effects (`sideEffects`) the only typo corrected is a doubled letter added
 * or dropped (`aprove`, `comit`, `adress`, `sucess`, `cancell`, `deleete`; see `isDoubling`),
 * beside case and separators: every other edit turns one English word into another as often as
 * not, and a model writes words, so the value sent may be the one it meant, for an action the
 * enum does not have. A letter replaced (`charge`/`change`, `stop`/`step`), a letter added or
 * dropped (`send`/`spend`, `rest`/`reset`, `fact`/`facet`), two letters swapped
 * (`causal`/`casual`, `marital`/`martial`, `complaint`/`compliant`) are refused, with the
 * schema's message naming the allowed values.
 */
export function isNearMiss(value: string, allowed: string, sideEffects = false): boolean {
  return nearMissOf(readWords(value), readWords(allowed), sideEffects);
}

/** A value as {@link isNearMiss} compares it: its skeleton and its words, read once. */
export interface ReadWords {
  readonly skeleton: string;
  readonly words: readonly string[];
}

export const readWords = (value: string): ReadWords => ({ skeleton: skeleton(value), words: words(value) });

/** {@link isNearMiss} of two values read already (an enum's values are read once: enum-index.ts). */
export function nearMissOf(value: ReadWords, allowed: ReadWords, sideEffects = false): boolean {
  // Symbols are meaning, not separators: `!=` is not `=`, `UTC+5` not `UTC-5`, `-1` not `1`, `C` not `C++`.
  if (value.skeleton !== allowed.skeleton) return false;
  const sent = value.words;
  const meant = allowed.words;
  if (sent.length !== meant.length) return false;
  let differing = 0;
  for (let i = 0; i < sent.length; i++) {
    if (sent[i] === meant[i]) continue;
    if (++differing > 1 || !isWordTypo(sent[i]!, meant[i]!, sideEffects)) return false;
  }
  // No word differs: only the separators do (`sort-asc` for `sort_asc`, `sortAsc` for `sort_asc`).
  return true;
}

const WORD_BREAK = /[^\p{L}\p{N}]+|(?<=\p{Ll})(?=\p{Lu})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u;

/**
 * What `value` is beside its words: each run of letters and digits as `w`, a space, `_` or `-`
 * between two of them (or a change of case, `sortAsc`) as `_`, and every other character as it
 * is, leading and trailing `-` and `_` too. Values that differ in it are never near misses.
 */
function skeleton(value: string): string {
  return value
    .replace(/(?<=\p{Ll})(?=\p{Lu})/gu, '_')
    .replace(/(?<=[\p{L}\p{N}])[\s_-]+(?=[\p{L}\p{N}])/gu, '_')
    .replace(/[\p{L}\p{N}]+/gu, 'w');
}

/** `value`'s words, lower-cased: `sortAsc`, `sort_asc` and `SORT-asc` are `sort`, `asc`. */
function words(value: string): string[] {
  return value
    .split(WORD_BREAK)
    .filter((word) => word !== '')
    .map((word) => word.toLowerCase());
}

function isWordTypo(sent: string, meant: string, sideEffects: boolean): boolean {
  if (/\p{N}/u.test(sent) || /\p{N}/u.test(meant)) return false;
  if (sent[0] !== meant[0] || Math.min(sent.length, meant.length) < 3) return false;
  const distance = levenshtein(sent, meant, 2);
  if (sideEffects) return distance === 1 && isDoubling(sent, meant);
  if (distance === 2) return meant.length >= 6 && isSwap(sent, meant);
  return distance === 1;
}

/**
 * Whether two words one letter apart differ only by a letter doubled in one of them (`aprove` and
 * `approve`, `cancell` and `cancel`): the added letter is the one beside it, so no letter the
 * other word lacks comes in. Some such pairs are words (`later` and `latter`, `lose` and
 * `loose`); far fewer than those of any other one-letter edit.
 */
function isDoubling(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) !== 1) return false;
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  let i = 0;
  while (i < short.length && short[i] === long[i]) i++;
  // long[i] is the added letter: the rest must match, and it must double a neighbour.
  return long.slice(i + 1) === short.slice(i) && (long[i] === long[i - 1] || long[i] === long[i + 1]);
}

/** Whether `a` is `b` with two adjacent letters swapped. */
function isSwap(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  const at: number[] = [];
  for (let i = 0; i < a.length && at.length <= 2; i++) if (a[i] !== b[i]) at.push(i);
  return at.length === 2 && at[1] === at[0]! + 1 && a[at[0]!] === b[at[1]!] && a[at[1]!] === b[at[0]!];
}
