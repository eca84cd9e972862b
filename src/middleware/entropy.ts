const counts = new Uint32Array(128);

/**
 * Shannon entropy, in bits per character, of `text[start, end)` (ASCII; other characters count
 * as one symbol). Uses one preallocated table: no allocation per call.
 */
export function shannonEntropy(text: string, start = 0, end = text.length): number {
  const n = end - start;
  if (n <= 0) return 0;
  counts.fill(0);
  for (let i = start; i < end; i++) counts[Math.min(text.charCodeAt(i), 127)] += 1;
  let bits = 0;
  for (let c = 0; c < 128; c++) {
    const k = counts[c]!;
    if (k === 0) continue;
    const p = k / n;
    bits -= p * Math.log2(p);
  }
  return bits;
}
