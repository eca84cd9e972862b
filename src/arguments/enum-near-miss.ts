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
 * For a tool with side effects (`sideEffects`) the typo must also be one that does not spell
 * another word (see `isSlip`): a letter replaced, or a consonant added or dropped, turns one
 * English word into another as often as not (`charge` and `change`, `stop` and `step`, `send`
 * and `spend`, `sale` and `scale`), and a model writes words: the value sent may be the one it
 * meant, for an action the enum does not have.
 */
export function isNearMiss(value: string, allowed: string, sideEffects = false): boolean {
  // Symbols are meaning, not separators: `!=` is not `=`, `UTC+5` not `UTC-5`, `-1` not `1`, `C` not `C++`.
  if (skeleton(value) !== skeleton(allowed)) return false;
  const sent = words(value);
  const meant = words(allowed);
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
  if (distance === 2) return meant.length >= 6 && isSwap(sent, meant);
  return distance === 1 && (!sideEffects || isSlip(sent, meant));
}

const VOWEL = /^[aeiou]$/;
const CONSONANT = /^(?![aeiou])\p{L}$/u;

/**
 * Whether two words one letter apart (an added or dropped letter, or a replaced one) differ by a
 * slip that leaves no other word: a vowel doubled or dropped from a double (`deleete` for
 * `delete`), or a vowel dropped or added between two consonants (`activte`, `metrc`, `mtric`,
 * `standrd`), which leaves a run of consonants English spells few words with. Not a replaced
 * letter (`charge`/`change`, `stop`/`step`, `delate`/`delete`), a consonant added or dropped
 * (`send`/`spend`, `pan`/`plan`, `stat`/`start`), a vowel dropped beside another vowel
 * (`bred`/`bread`, `cost`/`coast`, `plan`/`plain`) or at the end (`spit`/`spite`): each of
 * these makes words. Some slips still do (`lose` and `loose`, `card` and `cared`); they are
 * rarer than the typos refused here.
 */
function isSlip(a: string, b: string): boolean {
  if (a.length === b.length) return false;
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  for (let i = 0; i < long.length; i++) {
    if (long.slice(0, i) + long.slice(i + 1) !== short) continue;
    const [before, letter, after] = [long[i - 1] ?? '', long[i]!, long[i + 1] ?? ''];
    if (!VOWEL.test(letter)) continue;
    if (before === letter || after === letter || (CONSONANT.test(before) && CONSONANT.test(after))) return true;
  }
  return false;
}

/** Whether `a` is `b` with two adjacent letters swapped. */
function isSwap(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  const at: number[] = [];
  for (let i = 0; i < a.length && at.length <= 2; i++) if (a[i] !== b[i]) at.push(i);
  return at.length === 2 && at[1] === at[0]! + 1 && a[at[0]!] === b[at[1]!] && a[at[1]!] === b[at[0]!];
}
