import { levenshtein } from '../json';
import { nearDeclared } from './near-keys';

/** Longest name compared, and most properties read, for a hint: a refusal names up to 5 properties. */
const MAX_NAME = 64;
const MAX_CANDIDATES = 200;

/**
 * The one of `declared` a refusal may suggest for `name`, a property its schema does not declare:
 * a near miss as repairs read one (`nearDeclared`), else, since a hint renames nothing (the model
 * reads it and calls again), a looser one: one edit, two letters swapped counting as one (`qurey`
 * and `qeury` for `query`, `lmiit` for `limit`), or two edits in names of six letters or more, case
 * aside, never in the first letter (as repairs: `inits` is no hint of `units`) nor in names under
 * three letters. None when more than one property is that near, or
 * `object` holds it already.
 */
export function hintedKey(name: string, declared: readonly string[], object: object): string | undefined {
  const near = nearDeclared(name, declared, object);
  if (near !== undefined || name.length > MAX_NAME || name.length < 3) return near;
  const sent = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = 3;
  let ties = 0;
  for (const candidate of declared.slice(0, MAX_CANDIDATES)) {
    if (candidate.length < 3 || candidate.length > MAX_NAME || Math.abs(candidate.length - sent.length) > 2 || Object.hasOwn(object, candidate)) continue;
    const meant = candidate.toLowerCase();
    if (meant[0] !== sent[0]) continue;
    const distance = levenshtein(sent, meant, 2, true);
    const allowed = Math.min(sent.length, candidate.length) >= 6 ? 2 : 1;
    if (distance > allowed || distance > bestDistance) continue;
    if (distance < bestDistance) [best, bestDistance, ties] = [candidate, distance, 0];
    else ties++;
  }
  return ties === 0 ? best : undefined;
}
