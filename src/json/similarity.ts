/**
 * Levenshtein edit distance, stopping early once it exceeds `max`. With `swaps`, two adjacent
 * characters swapped count as one edit (the optimal string alignment distance: `qurey` is one
 * edit from `query`).
 */
export function levenshtein(a: string, b: string, max = Infinity, swaps = false): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (swaps && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    // A swap reaches back two rows, to a value no less than the last row's least less one, so it
    // costs past `max` too: a row past `max` still ends it.
    if (rowMin > max) return max + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/** Similarity in 0..1: one minus the edit distance over the longer length. */
export function similarity(a: string, b: string): number {
  const longest = Math.max(a.length, b.length);
  return longest === 0 ? 1 : 1 - levenshtein(a, b) / longest;
}

/**
 * The most character pairs {@link closestMatch} compares for one name, under a millisecond: the
 * candidates past it are not looked at. A made-up name of 128 characters against 10,000 offered
 * names of 128 took 0.9-1.4 s per call (a turn holds 128 calls), the event loop blocked throughout.
 */
export const MAX_MATCH_WORK = 100_000;

/** The most candidates {@link closestMatch} looks at for one name, however short their distances: a turn's 128 calls each ran through 10,000 offered names. */
export const MAX_MATCH_CANDIDATES = 1_000;

/** The candidate most similar to `name`, when at least `threshold` similar, among the first candidates {@link MAX_MATCH_CANDIDATES} and {@link MAX_MATCH_WORK} allow. */
export function closestMatch(
  name: string,
  candidates: Iterable<string>,
  threshold = 0.4,
): string | undefined {
  let best: string | undefined;
  let bestScore = threshold;
  let work = 0;
  let looked = 0;
  const lower = name.toLowerCase();
  for (const candidate of candidates) {
    if (++looked > MAX_MATCH_CANDIDATES) break;
    // Lengths this far apart cannot reach the score (a made-up name of megabytes is compared with
    // nothing), and the distance is computed only as far as the score still can be: an unbounded
    // edit distance of a 100 KB name with 200 tool names took 3.7 s of CPU.
    const longest = Math.max(lower.length, candidate.length);
    const maxDistance = Math.floor((1 - bestScore) * longest);
    if (Math.abs(lower.length - candidate.length) > maxDistance) continue;
    work += lower.length * candidate.length;
    if (work > MAX_MATCH_WORK) break;
    const score = longest === 0 ? 1 : 1 - levenshtein(lower, candidate.toLowerCase(), maxDistance) / longest;
    if (score >= bestScore && (best === undefined || score > bestScore)) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}
