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
const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The known key `key` most likely misspells: its snake_case form (`timeoutMs`), or the nearest by
 * edit distance, at most a third of its length and {@link MAX_SUGGESTION_EDITS} edits away (so a
 * short made-up key is offered nothing far from it), or else the one key it abbreviates (`args`).
 * Ties go to the key listed first.
 */
export function suggestKey(key: string, known: readonly string[]): string | undefined {
  const snaked = snake(key);
  if (snaked !== key && known.includes(snaked)) return snaked;
  const lower = key.toLowerCase();
  const bound = Math.min(MAX_SUGGESTION_EDITS, Math.max(1, Math.floor(lower.length / 3)));
  let best: string | undefined;
  let bestDistance = bound + 1;
  for (const candidate of known) {
    const distance = levenshtein(lower, candidate, bound);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== undefined) return best;
  // Else an abbreviation, when it abbreviates one known key only.
  const longer = known.filter((candidate) => abbreviates(lower, candidate));
  return longer.length === 1 ? longer[0] : undefined;
}

/**
 * The problem to report for a key the config does not take at its level: the known key it likely
 * misspells, or else the keys that level takes (`note` is added to that list).
 */
export function unknownKeyProblem(key: string, known: readonly string[], note?: string): string {
  const shown = JSON.stringify(key.length > 100 ? `${key.slice(0, 100)}…` : key);
  const meant = suggestKey(key.slice(0, 200), known);
  if (meant !== undefined) return `unknown key ${shown} (did you mean ${meant}?)`;
  if (known.length === 0) return `unknown key ${shown} (this mapping takes no keys)`;
  return `unknown key ${shown} (expected one of ${known.join(', ')}${note ? `; ${note}` : ''})`;
}
