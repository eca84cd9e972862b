/**
 * Claims whose answer never came (their step timed out after it was sent), by record key. Their
 * attempt failed before running anything (a side-effecting call whose claim fails is not run) and
 * their release waits among the pending writes, but the claim may have reached Redis late and hold
 * its key. So may a claim whose own release failed (its tool did not run either). The next claim
 * of the same key on this replica (the call's automatic retry, ~250 ms later, or an identical call)
 * gives such a claim up in its own step (begin-attempt.lua) instead of finding it IN_PROGRESS until
 * the release is written.
 */
export interface OrphanClaims {
  /** Remembers the claim of `owner` on `record`; past `max`, the oldest is forgotten. */
  add(record: string, owner: string): void;
  /** The owner of the orphan claim on `record`, or ''. */
  ownerOf(record: string): string;
  /** Forgets the orphan claim of `owner` on `record` (given up, or released). */
  forget(record: string, owner: string): void;
}

export function createOrphanClaims(max: number): OrphanClaims {
  const owners = new Map<string, string>();
  return {
    add(record, owner) {
      owners.delete(record);
      owners.set(record, owner);
      if (owners.size > max) owners.delete(owners.keys().next().value!);
    },
    ownerOf: (record) => (owners.size === 0 ? '' : (owners.get(record) ?? '')),
    forget(record, owner) {
      if (owners.get(record) === owner) owners.delete(record);
    },
  };
}
