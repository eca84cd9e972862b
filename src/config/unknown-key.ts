import { levenshtein } from '../json';

/** The most edits a misspelt key may be from a known one to be offered as what was meant. */
const MAX_SUGGESTION_EDITS = 3;

/** The shortest key taken as an abbreviation of a known one (`args` for `arguments`). */
const MIN_ABBREVIATION = 3;

/** True when `short` is `long` with letters left out, from the same first letter (`args`, `arguments`). */
function abbreviates(short: string, long: string): boolean {
  if (short.length < MIN_ABBREVIATION || short.length >= long.length || short[0] !== long[0]) return false;
  let at = 0;
  for (const c of long) if (c === short[at]) at++;
  return at >= short.length;
}

/** `timeoutMs` as the config spells it: `timeout_ms`. */
export const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The most known keys offered together for a key that is a word of each (`memoize`). */
const MAX_WORD_MATCHES = 3;

/** The shortest key looked for as a word of known keys (not `ms`, a word of every duration). */
const MIN_WORD = 3;

/** True when `a` is `b` with two neighbouring letters swapped (`macth`, `match`): one slip of the fingers, two edits. */
function swapsTwo(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let at = 0;
  while (at < a.length && a[at] === b[at]) at++;
  return at + 1 < a.length && a[at] === b[at + 1] && a[at + 1] === b[at] && a.slice(at + 2) === b.slice(at + 2);
}

/**
 * The known key `key` misspells: its snake_case form (`timeoutMs`), or the nearest by edit
 * distance, a swap of neighbouring letters counting as one edit, at most a third of its length
 * and {@link MAX_SUGGESTION_EDITS} edits away (so a short made-up key is offered nothing far from
 * it). Ties go to the key listed first.
 */
function nearKey(key: string, known: readonly string[]): string | undefined {
  const snaked = snake(key);
  if (snaked !== key && known.includes(snaked)) return snaked;
  const lower = key.toLowerCase();
  const bound = Math.min(MAX_SUGGESTION_EDITS, Math.max(1, Math.floor(lower.length / 3)));
  let best: string | undefined;
  let bestDistance = bound + 1;
  for (const candidate of known) {
    const distance = swapsTwo(lower, candidate) ? 1 : levenshtein(lower, candidate, bound);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** The one known key `key` abbreviates (`args`), if only one. */
function abbreviated(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const longer = known.filter((candidate) => abbreviates(lower, candidate));
  return longer.length === 1 ? longer[0] : undefined;
}

/**
 * The known keys of which `key` is whole words (`memoize`: memoize_ttl_seconds and skip_memoize,
 * `redaction`: skip_redaction), in their order; none when more than {@link MAX_WORD_MATCHES}.
 */
function keysWithWords(key: string, known: readonly string[]): string[] {
  const words = `_${snake(key).toLowerCase().replace(/^_+|_+$/g, '')}_`;
  if (words.length - 2 < MIN_WORD) return [];
  const matches = known.filter((candidate) => candidate !== key && `_${candidate}_`.includes(words));
  return matches.length <= MAX_WORD_MATCHES ? matches : [];
}

/**
 * The known key `key` most likely misspells: its snake_case form, or the nearest by edit distance
 * (see nearKey), or else the one key it abbreviates (`args`).
 */
export function suggestKey(key: string, known: readonly string[]): string | undefined {
  return nearKey(key, known) ?? abbreviated(key, known);
}

/**
 * The problem to report for a key the config does not take at its level: the known key it likely
 * misspells, or the keys it is a word of (`memoize`), or else the keys that level takes (`note` is
 * added to that list).
 */
export function unknownKeyProblem(key: string, known: readonly string[], note?: string): string {
  const shown = JSON.stringify(key.length > 100 ? `${key.slice(0, 100)}…` : key);
  const given = key.slice(0, 200);
  const near = nearKey(given, known);
  const words = keysWithWords(given, known);
  const abbreviation = abbreviated(given, known);
  const meant = near !== undefined ? [near] : words.length > 0 ? words : abbreviation !== undefined ? [abbreviation] : [];
  if (meant.length > 0) return `unknown key ${shown} (did you mean ${meant.length === 1 ? meant[0] : `${meant.slice(0, -1).join(', ')} or ${meant.at(-1)}`}?)`;
  if (known.length === 0) return `unknown key ${shown} (this mapping takes no keys)`;
  return `unknown key ${shown} (expected one of ${known.join(', ')}${note ? `; ${note}` : ''})`;
}
