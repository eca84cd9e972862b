/**
 * The largest level at which `amounts` fit in `budget` when each amount over it is cut to it
 * (water-filling: the small ones keep all they have); Infinity when they fit whole.
 */
export function waterLevel(amounts: readonly number[], budget: number): number {
  const sorted = [...amounts].sort((a, b) => a - b);
  let left = budget;
  for (let i = 0; i < sorted.length; i++) {
    const share = Math.floor(left / (sorted.length - i));
    if (sorted[i]! > share) return share;
    left -= sorted[i]!;
  }
  return Infinity;
}
