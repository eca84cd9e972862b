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

/** Values kept each until its lease ends, at most `max` of them (see createLeased). */
export interface Leased<T> {
  add(key: string, value: T, leaseMs: number, from?: number): void;
  /** The value under `key` and when its lease ends, forgotten; undefined when none or ended. */
  take(key: string): { readonly value: T; readonly until: number } | undefined;
}

/**
 * Keeps at most `max` values, each until its lease ends (counted from `from`, default now); past
 * `max`, the oldest is forgotten. The live claims and the taken probes of the Redis store.
 */
export function createLeased<T>(max: number, now: () => number = Date.now): Leased<T> {
  const held = new Map<string, { readonly value: T; readonly until: number }>();
  let adds = 0;
  /** Forgets the values whose lease has ended, and the oldest while past `max`. */
  const sweep = (t: number) => {
    for (const [key, entry] of held) if (held.size > max || entry.until <= t) held.delete(key);
  };
  return {
    add(key, value, leaseMs, from) {
      const t = now();
      held.delete(key);
      held.set(key, { value, until: (from ?? t) + leaseMs });
      // Swept now and then, not at every add: takes delete from the front, and a look from the
      // front at each add stepped over their holes (249 µs a claim with 99,000 in flight).
      if (held.size > max || ++adds % SWEEP_EVERY === 0) sweep(t);
    },
    take(key) {
      const entry = held.get(key);
      held.delete(key);
      return entry && entry.until > now() ? entry : undefined;
    },
  };
}

/**
 * Keeps at most `max` claims, each until its lease ends (Redis frees the key then: there is
 * nothing left to hold); past `max`, the oldest is forgotten, and its finish, if it fails, holds
 * no claim.
 */
export function createLiveClaims(max: number, now: () => number = Date.now): LiveClaims {
  const claims = createLeased<string>(max, now);
  return {
    add: (record, owner, leaseMs) => claims.add(record, owner, leaseMs),
    take: (record) => claims.take(record)?.value,
  };
}

/** Adds between two sweeps of the values whose lease has ended. */
const SWEEP_EVERY = 1024;
