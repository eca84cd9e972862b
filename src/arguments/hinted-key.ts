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
    const distance = editsWithin2(sent, meant);
    const allowed = Math.min(sent.length, candidate.length) >= 6 ? 2 : 1;
    if (distance > allowed || distance > bestDistance) continue;
    if (distance < bestDistance) [best, bestDistance, ties] = [candidate, distance, 0];
    else ties++;
  }
  return ties === 0 ? best : undefined;
}

/**
 * The optimal string alignment distance of `a` and `b` (Levenshtein's, with two adjacent letters
 * swapped counting as one edit), or 3 once it is past 2: a row whose least value is past 2 ends it.
 */
function editsWithin2(a: string, b: string): number {
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1);
    row[0] = i;
    let least = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      row[j] = value;
      if (value < least) least = value;
    }
    if (least > 2) return 3;
    [before, previous] = [previous, row];
  }
  return Math.min(previous[b.length]!, 3);
}
