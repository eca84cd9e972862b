import { TenantShares } from './tenant-shares';
import type { ClaimOutcome, StoredResult } from './store';

/** What a claim finds of a record: never 'claimed'. */
export type HeldOutcome = Exclude<ClaimOutcome, { state: 'claimed' }>;

export const IN_PROGRESS: HeldOutcome = Object.freeze({ state: 'in_progress' });
export const UNKNOWN: FinishedOutcome = Object.freeze({ state: 'unknown' });

/** What an attempt leaves of its claim: a result, or an unknown outcome. */
export type FinishedOutcome = Exclude<HeldOutcome, { state: 'in_progress' }>;

/** An idempotency record and where it is kept. */
interface HeldRecord {
  readonly outcome: HeldOutcome;
  /** The claim's owner, kept by its UNKNOWN mark; '' for a completion, or a claim anyone may release. */
  readonly owner: string;
  readonly expiresAt: number;
  /** The tenant whose share a finished record counts against ('' for a claim: claims are not shared out). */
  readonly tenant: string;
  readonly session: string;
  readonly key: string;
  /** Characters counted against the finished records' budget: its key and result (0 for a claim). */
  readonly chars: number;
}

/** The bounds of {@link createIdempotencyRecords} (see MemoryStoreOptions). */
export interface RecordBounds {
  readonly maxPerSession: number;
  readonly maxFinished: number;
  readonly maxFinishedChars: number;
  readonly maxClaims: number;
}

/**
 * The memory store's idempotency records, kept apart from its sessions so that evicting a session
 * (the session cap) never drops them: a claim stays until it ends or its lease does, a finished
 * record (completed or unknown) until its TTL, unless the per-session cap (the session's oldest go)
 * or the store-wide bounds on finished records (count and characters) evict it first. Past either
 * store-wide bound, the expired records go, then the oldest of the tenants holding more than an
 * equal share, down to it (TenantShares): so one tenant's traffic never evicts the records of a
 * tenant within its share, and a retried side effect of that tenant is still replayed. A claim in
 * progress is never evicted (its tool may be running, and an identical call must find it); past
 * `maxClaims` of them a new claim is refused instead, as Redis out of memory would refuse it
 * (claims whose lease ended are swept out first, when one can have ended).
 */
export interface IdempotencyRecords {
  /** What the live record of `key` in `session` holds, or undefined. */
  find(session: string, key: string, t: number): HeldOutcome | undefined;
  /** Claims `key`; false, changing nothing, when `maxClaims` claims are in progress. */
  claim(session: string, key: string, owner: string, expiresAt: number, t: number): boolean;
  /** Records the finished outcome of `key` in `tenant`'s `session`, replacing its claim; an UNKNOWN mark keeps its claim's `owner`. */
  finish(tenant: string, session: string, key: string, outcome: FinishedOutcome, expiresAt: number, t: number, owner?: string): void;
  /** Records `outcome` over `owner`'s own live UNKNOWN mark of `key` only (a late answer); false, changing nothing, when none is there. */
  settle(tenant: string, session: string, key: string, owner: string, outcome: FinishedOutcome, expiresAt: number, t: number): boolean;
  /** Deletes the claim of `key` while it is in progress and, with an owner, still that owner's. */
  release(session: string, key: string, owner: string | undefined, t: number): void;
  /** Deletes the session's records but the claims still running. */
  endSession(session: string, t: number): void;
  /** The sessions holding records now, claims included. */
  sessions(): IterableIterator<string>;
  clear(): void;
}

/** Characters a stored result holds. */
const resultChars = (r: StoredResult): number =>
  r.output.length + r.resolvedToolName.length + r.resultHandle.length + (r.errorMessage?.length ?? 0) + (r.suggestion?.length ?? 0);

export function createIdempotencyRecords(bounds: RecordBounds): IdempotencyRecords {
  const bySession = new Map<string, Map<string, HeldRecord>>();
  // Every record is counted in one of these: the claims oldest first, the finished records by tenant.
  const claims = new Set<HeldRecord>();
  const finished = new TenantShares<HeldRecord>({ maxEntries: bounds.maxFinished, maxChars: bounds.maxFinishedChars });
  // No claim can have lapsed before this time, so a sweep before it would find none.
  let nextSweepAt = Infinity;

  /** Takes `record` out of the bounds' counts. */
  function uncount(record: HeldRecord): void {
    if (record.outcome === IN_PROGRESS) claims.delete(record);
    else finished.delete(record);
  }

  function remove(record: HeldRecord): void {
    uncount(record);
    const held = bySession.get(record.session);
    if (held?.get(record.key) !== record) return;
    held.delete(record.key);
    if (held.size === 0) bySession.delete(record.session);
  }

  function put(record: HeldRecord, t: number): void {
    let held = bySession.get(record.session);
    if (!held) bySession.set(record.session, (held = new Map()));
    const old = held.get(record.key);
    if (old) {
      uncount(old);
      // Deleted first so that the session's records stay in the order they were written.
      held.delete(record.key);
    }
    held.set(record.key, record);
    if (held.size > bounds.maxPerSession) capSession(held, t);
  }

  /** The oldest records of a session past its cap go, but never a claim still running. */
  function capSession(held: Map<string, HeldRecord>, t: number): void {
    for (const record of held.values()) {
      if (record.outcome !== IN_PROGRESS || record.expiresAt <= t) remove(record);
      if (held.size <= bounds.maxPerSession) return;
    }
  }

  function sweepLapsedClaims(t: number): void {
    let next = Infinity;
    for (const record of claims) {
      if (record.expiresAt <= t) remove(record);
      else next = Math.min(next, record.expiresAt);
    }
    nextSweepAt = next;
  }

  function finish(tenant: string, session: string, key: string, outcome: FinishedOutcome, expiresAt: number, t: number, owner = ''): void {
    const chars = key.length + (outcome.state === 'completed' ? resultChars(outcome.result) : 0);
    const record: HeldRecord = { outcome, owner: outcome.state === 'unknown' ? owner : '', expiresAt, tenant, session, key, chars };
    // Counted before it is put: the session's cap may evict it at once (its other records running).
    finished.add(record);
    put(record, t);
    // The record just written stays, even alone past the budget: a result is never lost at once.
    if (finished.over) finished.trim(record, t, remove);
  }

  return {
    find(session, key, t) {
      const record = bySession.get(session)?.get(key);
      if (record === undefined) return undefined;
      if (record.expiresAt > t) return record.outcome;
      remove(record);
      return undefined;
    },
    claim(session, key, owner, expiresAt, t) {
      if (claims.size >= bounds.maxClaims && t >= nextSweepAt) sweepLapsedClaims(t);
      if (claims.size >= bounds.maxClaims) return false;
      const record: HeldRecord = { outcome: IN_PROGRESS, owner, expiresAt, tenant: '', session, key, chars: 0 };
      claims.add(record);
      put(record, t);
      nextSweepAt = Math.min(nextSweepAt, expiresAt);
      return true;
    },
    finish,
    settle(tenant, session, key, owner, outcome, expiresAt, t) {
      const record = bySession.get(session)?.get(key);
      if (owner === '' || record?.outcome.state !== 'unknown' || record.owner !== owner || record.expiresAt <= t) return false;
      finish(tenant, session, key, outcome, expiresAt, t);
      return true;
    },
    release(session, key, owner, t) {
      const record = bySession.get(session)?.get(key);
      if (record?.outcome === IN_PROGRESS && record.expiresAt > t && (!owner || record.owner === owner)) remove(record);
    },
    endSession(session, t) {
      const held = bySession.get(session);
      // A claim still running stays until its lease ends: an identical call meanwhile must not run
      // the side effect a second time.
      for (const record of held?.values() ?? []) if (record.outcome !== IN_PROGRESS || record.expiresAt <= t) remove(record);
    },
    sessions: () => bySession.keys(),
    clear() {
      bySession.clear();
      claims.clear();
      finished.clear();
      nextSweepAt = Infinity;
    },
  };
}
