/**
 * The claims this replica took whose attempt has not finished, by record key: the finish step
 * (its completion, UNKNOWN mark or release) names no owner, and a completion that cannot be
 * written must hold its claim, as that owner's (see keep-claim.lua).
 */
export interface LiveClaims {
  /** Remembers the claim of `owner` on `record`, for its lease (then it may be forgotten). */
  add(record: string, owner: string, leaseMs: number): void;
  /** The owner of the claim on `record`, forgotten (its attempt is finishing); undefined when none is known. */
  take(record: string): string | undefined;
}

/**
 * Keeps at most `max` claims, each until its lease ends (Redis frees the key then: there is
 * nothing left to hold); past `max`, the oldest is forgotten, and its finish, if it fails, holds
 * no claim.
 */
export function createLiveClaims(max: number, now: () => number = Date.now): LiveClaims {
  const claims = new Map<string, { readonly owner: string; readonly until: number }>();
  let adds = 0;
  /** Forgets the claims whose lease has ended, and the oldest while past `max`. */
  const sweep = (t: number) => {
    for (const [key, claim] of claims) if (claims.size > max || claim.until <= t) claims.delete(key);
  };
  return {
    add(record, owner, leaseMs) {
      const t = now();
      claims.delete(record);
      claims.set(record, { owner, until: t + leaseMs });
      // Swept now and then, not at every add: finishes delete from the front, and a look from the
      // front at each add stepped over their holes (249 µs a claim with 99,000 in flight).
      if (claims.size > max || ++adds % SWEEP_EVERY === 0) sweep(t);
    },
    take(record) {
      const claim = claims.get(record);
      claims.delete(record);
      return claim && claim.until > now() ? claim.owner : undefined;
    },
  };
}

/** Adds between two sweeps of the claims whose lease has ended. */
const SWEEP_EVERY = 1024;
