/**
 * The largest level at which `amounts` fit in `budget` when each amount over it is cut to it
 * (water-filling: the small ones keep all they have); Infinity when they fit whole.
 */
export function waterLevel(amounts: ArrayLike<number>, budget: number): number {
  // A typed array sorts numerically, natively: no comparator call per comparison (a store's trim
  // sorts one amount per tenant, and there may be many tenants).
  const sorted = Float64Array.from(amounts).sort();
  let left = budget;
  for (let i = 0; i < sorted.length; i++) {
    const share = Math.floor(left / (sorted.length - i));
    if (sorted[i]! > share) return share;
    left -= sorted[i]!;
  }
  return Infinity;
}
