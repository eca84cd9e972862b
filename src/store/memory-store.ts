import { shortHash } from '../json';
import type { Logger } from '../log';
import { evictOldest, TRIM_TO } from './evict-oldest';
import { rememberLastObject, rememberRecentTexts } from './remember';
import { NO_STREAK, StreakIndex } from './streak-index';
import { handleScope } from './result-handle';
import { createSessionEndListeners } from './session-end-listeners';
import { createSpillBudget } from './spill-budget';
import type { ClaimOutcome, SessionScope, Store, StoredResult } from './store';

/** Options of the in-memory store. */
export interface MemoryStoreOptions {
  /**
   * Sessions kept; past it the least recently used tenth is evicted. Recency is kept to within a
   * quarter of this cap: a session used again is moved to the back of the order only if other
   * sessions were used more than `maxSessions / 4` times since it last moved (a move per use
   * measured as the store's largest cost). @default 10000
   */
  readonly maxSessions?: number;
  /** Idempotency records kept per session before the oldest is evicted. @default 10000 */
  readonly maxRecordsPerSession?: number;
  /** Spilled results kept per session before the oldest is evicted. @default 1000 */
  readonly maxResultsPerSession?: number;
  /**
   * Characters of spilled results kept across all sessions before the oldest are evicted (a
   * result may be 16 Mi characters, kept its TTL). @default 134217728 (128 Mi, ~256 MiB)
   */
  readonly maxSpilledChars?: number;
  /** Clock, for tests. */
  readonly now?: () => number;
  /** Where a failing session-end listener is reported. @default none */
  readonly logger?: Logger;
}

interface Expiring<T> {
  readonly value: T;
  readonly expiresAt: number;
}

const IN_PROGRESS: ClaimOutcome = Object.freeze({ state: 'in_progress' });

type Record = { state: 'in_progress'; owner: string } | { state: 'unknown' } | { state: 'completed'; result: StoredResult };

/** A session's state; each part is made on first use, so a session of one read costs little. */
interface SessionState {
  /** The store's use count when this session last moved to the back of the recency order. */
  movedAt: number;
  records?: Map<string, Expiring<Record>>;
  /** Calls counted per budget (`budget:` policies), by budget id. */
  budgets?: Map<string, number>;
  readonly window: StreakIndex;
  results?: Map<string, Expiring<string>>;
  memory?: Expiring<string>[];
}

/** Window ops and results up to this many characters are kept as they are, longer ones hashed. */
const RAW_MAX = 128;

/**
 * How the memory store keeps a loop-window op or result: short text as it is (no hash to
 * compute), longer text as its 32-character short hash. Text of exactly 32 characters is hashed
 * too, so that a text kept as it is never equals another's hash.
 */
const keptAsIs = (text: string): boolean => text.length <= RAW_MAX && text.length !== 32;
const windowKey = (text: string): string => (keptAsIs(text) ? text : shortHash(text));

const live = <T>(entry: Expiring<T> | undefined, now: number): T | undefined =>
  entry !== undefined && entry.expiresAt > now ? entry.value : undefined;

/** Caps a per-session map at `max`, evicting the oldest entries. */
function capMap<K>(map: Map<K, unknown>, max: number): void {
  evictOldest(map, () => map.size > max);
}

/**
 * Caps a session's idempotency records at `max`, evicting the oldest, but never a claim still in
 * progress (its tool may be running, and an identical call must find it): past `max` by the
 * claims running at most.
 */
function capRecords(records: Map<string, Expiring<Record>>, max: number, t: number): void {
  if (records.size <= max) return;
  for (const [key, held] of records) {
    if (held.value.state !== 'in_progress' || held.expiresAt <= t) records.delete(key);
    if (records.size <= max) return;
  }
}

/** The embedded default store: one process, everything bounded by a TTL or a named cap. */
export function createMemoryStore(options: MemoryStoreOptions = {}): Store {
  const maxSessions = options.maxSessions ?? 10_000;
  const maxRecords = options.maxRecordsPerSession ?? 10_000;
  const maxResults = options.maxResultsPerSession ?? 1000;
  const spilled = createSpillBudget(options.maxSpilledChars ?? 128 * 1024 * 1024);
  const now = options.now ?? Date.now;
  const ends = createSessionEndListeners(options.logger);
  const sessions = new Map<string, SessionState>();
  const moveAfter = Math.max(1, Math.floor(maxSessions / 4));
  let uses = 0;
  // A call's two steps, and a turn's calls, share one scope object (TurnContext.scope): its key
  // is remembered for the scope seen last (a WeakMap entry per turn measured dearer than that).
  const keyOf = rememberLastObject((scope: SessionScope) => `${scope.tenant}\u0000${scope.sessionId}`);
  // An attempt's two steps hash a long op once.
  const hashedOp = rememberRecentTexts(shortHash);
  const opKey = (op: string): string => (keptAsIs(op) ? op : hashedOp(op));

  function session(scope: SessionScope, create: true): SessionState;
  function session(scope: SessionScope, create: boolean): SessionState | undefined;
  function session(scope: SessionScope, create: boolean): SessionState | undefined {
    const key = keyOf(scope);
    let state = sessions.get(key);
    uses++;
    if (state) {
      // Fewer than `moveAfter` sessions can have moved behind it since: it is far from the front.
      if (uses - state.movedAt > moveAfter) {
        sessions.delete(key);
        sessions.set(key, state);
        state.movedAt = uses;
      }
    } else if (create) {
      state = { movedAt: uses, window: new StreakIndex() };
      sessions.set(key, state);
      // Past the cap, the least recently used tenth goes at once.
      if (sessions.size > maxSessions) evictOldest(sessions, () => sessions.size > Math.floor(maxSessions * TRIM_TO));
    }
    return state;
  }

  return {
    beginAttempt({ scope, op, claim, budget }) {
      // A read of a session not seen yet creates nothing: its attempt's record will.
      const state = session(scope, claim !== undefined || budget !== undefined);
      if (!state) return { streak: NO_STREAK };
      const streak = state.window.streak(opKey(op));
      const t = now();
      // A call answered from an existing record runs nothing: it is not counted against a budget.
      const existing = claim && live(state.records?.get(claim.key), t);
      if (existing !== undefined) return { streak, claim: existing.state === 'in_progress' ? IN_PROGRESS : existing };
      let budgetLeft: number | undefined;
      if (budget) {
        const budgets = (state.budgets ??= new Map<string, number>());
        const used = budgets.get(budget.id) ?? 0;
        if (used >= budget.max) return { streak, overBudget: true };
        budgets.set(budget.id, used + 1);
        budgetLeft = budget.max - used - 1;
      }
      if (!claim) return budgetLeft === undefined ? { streak } : { streak, budgetLeft };
      const records = (state.records ??= new Map<string, Expiring<Record>>());
      records.delete(claim.key);
      records.set(claim.key, { value: { state: 'in_progress', owner: claim.owner ?? '' }, expiresAt: t + claim.leaseMs });
      capRecords(records, maxRecords, t);
      const outcome: ClaimOutcome = { state: 'claimed' };
      return budgetLeft === undefined ? { streak, claim: outcome } : { streak, claim: outcome, budgetLeft };
    },
    finishAttempt({ scope, op, record, idempotency, spill, memory }) {
      const state = session(scope, true);
      const t = now();
      const key = opKey(op);
      if (record) state.window.record({ op: key, hash: windowKey(record.result), failed: record.failed }, record.window);
      if (idempotency?.action === 'release') {
        const held = live(state.records?.get(idempotency.key), t);
        if (held?.state === 'in_progress' && (!idempotency.owner || held.owner === idempotency.owner)) state.records!.delete(idempotency.key);
      } else if (idempotency) {
        const value: Record = idempotency.action === 'complete' ? { state: 'completed', result: idempotency.result } : { state: 'unknown' };
        (state.records ??= new Map<string, Expiring<Record>>()).set(idempotency.key, { value, expiresAt: t + idempotency.ttlSeconds * 1000 });
      }
      if (spill) {
        const results = (state.results ??= new Map<string, Expiring<string>>());
        const entry = { value: spill.text, expiresAt: t + spill.ttlSeconds * 1000 };
        results.set(spill.handle, entry);
        capMap(results, maxResults);
        spilled.add(results, spill.handle, entry, spill.text.length);
      }
      if (memory) {
        const entries = (state.memory ??= []);
        entries.push({ value: memory.entry, expiresAt: t + memory.ttlSeconds * 1000 });
        // shift() drops the oldest in place (splice() would copy the dropped ones out).
        while (entries.length > memory.max) entries.shift();
      }
      return { streak: state.window.streak(key) };
    },
    async readResult(tenant, handle) {
      const scope = handleScope(tenant, handle);
      return scope ? live(session(scope, false)?.results?.get(handle), now()) : undefined;
    },
    async memory(scope) {
      const t = now();
      return (session(scope, false)?.memory ?? []).filter((e) => e.expiresAt > t).map((e) => e.value);
    },
    async endSession(scope) {
      const state = sessions.get(keyOf(scope));
      sessions.delete(keyOf(scope));
      // A claim still running stays until its lease ends: an identical call meanwhile must not run
      // the side effect a second time.
      const t = now();
      const running = [...(state?.records ?? [])].filter(([, record]) => record.value.state === 'in_progress' && live(record, t) !== undefined);
      if (running.length > 0) session(scope, true).records = new Map(running);
      ends.notify(scope);
    },
    onSessionEnd: (listener) => ends.add(listener),
    async close() {
      sessions.clear();
    },
  };
}
