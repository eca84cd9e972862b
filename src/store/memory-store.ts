import { shortHash } from '../json';
import { evictOldest } from './evict-oldest';
import { createIdempotencyRecords, UNKNOWN, type FinishedOutcome } from './idempotency-records';
import { LiveSessions } from './live-sessions';
import { resolveMemoryStoreOptions, spillBudgetRemedy, type MemoryStoreOptions } from './memory-store-options';
import { rememberLastObject, rememberRecentTexts } from './remember';
import { NO_STREAK, StreakIndex } from './streak-index';
import { ProbeClaims, probeDue } from './loop-probe';
import { localSessionKey, tenantSessionIds } from './local-session-key';
import { createMemoryBudget, memoryEntry, type MemoryEntry } from './memory-budget';
import { handleScope } from './result-handle';
import { createEvictedHandles } from './evicted-handles';
import { createSessionEndListeners } from './session-end-listeners';
import { localTenantErasures } from './tenant-erasures';
import { createSpillBudget } from './spill-budget';
import { markCounted } from './budget-marks';
import { createEndedTurns } from './session-end-marks';
import { withoutLostHandle } from './redis/spill-limits';
import { indexChunks, pageOf, type ChunkIndex } from './spilled-text';
import { DEFAULT_TOKEN_LEASE_MS, StoreUnavailableError, type ClaimOutcome, type SessionScope, type Store } from './store';
import { WindowBudget } from './window-budget';

export type { MemoryStoreOptions } from './memory-store-options';

const CLAIMED: ClaimOutcome = Object.freeze({ state: 'claimed' });

interface Expiring<T> {
  readonly value: T;
  readonly expiresAt: number;
}

/**
 * A session's state; each part is made on first use, so a session of one read costs little. Its
 * idempotency records are kept apart (IdempotencyRecords), so that ending it keeps a running claim.
 */
interface SessionState {
  readonly tenant: string;
  /**
   * When everything the session holds has expired: `windowTtlSeconds` after its last call, or
   * later while its budget counts, a spilled result or a memory entry live. Until then it goes only
   * when room is needed (LiveSessions).
   */
  expiresAt: number;
  /** Its last call plus `sessionHoldSeconds`: until then only its own tenant's sessions can push it out. */
  heldUntil: number;
  /** `heldUntil` on the steady clock of LiveSessions, which WindowBudget reads too (the wall clock may step back). */
  heldOnSteady: number;
  /** Calls counted per budget (`budget:` policies), by budget id, until `budgetsExpireAt`. */
  budgets?: Map<string, number>;
  budgetsExpireAt: number;
  /**
   * The marks of calls counted with a token (budget id, NUL, token -> when it goes), for
   * giveBackBudget: each lives its call's lease, as on Redis, and goes with the counts.
   */
  budgetMarks?: Map<string, number>;
  window: StreakIndex;
  /** The loop blocks' probes handed out (BeginAttempt.block). */
  probes?: ProbeClaims;
  /** When the loop window starts again empty: `windowTtlSeconds` after its last record (0: empty). */
  windowExpiresAt: number;
  results?: Map<string, Expiring<Spilled>>;
  memory?: MemoryEntry[];
}

/** A spilled text with its chunk index, so that a ReadResult page costs about its size. */
interface Spilled {
  readonly text: string;
  readonly index: ChunkIndex;
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

/** Keeps `state` until `at` at least. */
function keepUntil(state: SessionState, at: number): void {
  if (state.expiresAt < at) state.expiresAt = at;
}

const live = <T>(entry: Expiring<T> | undefined, now: number): T | undefined =>
  entry !== undefined && entry.expiresAt > now ? entry.value : undefined;

/** The embedded default store: one process, everything bounded by a TTL or a named cap. */
export function createMemoryStore(options: MemoryStoreOptions = {}): Store {
  const bounds = resolveMemoryStoreOptions(options);
  if (bounds.heapScale < 1) {
    const { maxRecordChars, maxSpilledChars, maxMemoryChars, maxWindowEntries } = bounds;
    bounds.logger?.info('memory store: budgets left at their defaults are scaled to this heap', { heapScale: Number(bounds.heapScale.toFixed(3)), maxRecordChars, maxSpilledChars, maxMemoryChars, maxWindowEntries });
  }
  const { maxSessions, maxResultsPerSession: maxResults } = bounds;
  const budgetTtlMs = bounds.budgetTtlSeconds * 1000;
  const windowTtlMs = bounds.windowTtlSeconds * 1000;
  const holdMs = bounds.sessionHoldSeconds * 1000;
  // Handles evicted for room are remembered (a bounded few), so that ReadResult says so.
  const evicted = createEvictedHandles(bounds.maxEvictedHandles);
  const spilled = createSpillBudget(bounds.maxSpilledChars, (tenant, handle, until) => evicted.add(tenant, handle, until));
  const eviction = { budgetChars: bounds.maxSpilledChars, remedy: spillBudgetRemedy(bounds) };
  const memoryChars = createMemoryBudget(bounds.maxMemoryChars);
  const windowEntries = new WindowBudget<SessionState>(bounds.maxWindowEntries);
  const records = createIdempotencyRecords({ maxPerSession: bounds.maxRecordsPerSession, maxFinished: bounds.maxRecords, maxFinishedChars: bounds.maxRecordChars, maxClaims: bounds.maxClaims });
  const now = bounds.now ?? Date.now;
  const ends = createSessionEndListeners({ logger: bounds.logger });
  // A call of a turn begun before its session's end writes back only its idempotency record.
  const endedTurns = createEndedTurns(bounds.maxEndedSessions, bounds.endMarkSeconds * 1000);
  // A session evicted for room takes its loop window out of the windows' bound at once: counted
  // on, it held its tenant's share, and another session's window in use restarted in its place.
  const sessions = new LiveSessions<SessionState>(maxSessions, (state) => windowEntries.forget(state));
  // A call's two steps, and a turn's calls, share one scope object (TurnContext.scope): its key
  // is remembered for the scope seen last (a WeakMap entry per turn measured dearer than that).
  const keyOf = rememberLastObject(localSessionKey);
  // An attempt's two steps hash a long op once.
  const hashedOp = rememberRecentTexts(shortHash);
  const opKey = (op: string): string => (keptAsIs(op) ? op : hashedOp(op));

  /**
   * The session of a call at `t`, made if new, held `sessionHoldSeconds` and kept
   * `windowTtlSeconds` from now at least.
   */
  function session(scope: SessionScope, t: number): SessionState {
    const key = keyOf(scope);
    let state = sessions.get(key, t);
    if (state) {
      keepUntil(state, t + windowTtlMs);
      state.heldUntil = t + holdMs;
    } else {
      state = { tenant: scope.tenant, expiresAt: t + windowTtlMs, heldUntil: t + holdMs, heldOnSteady: 0, budgetsExpireAt: 0, window: new StreakIndex(), windowExpiresAt: 0 };
      sessions.add(key, state, t);
    }
    state.heldOnSteady = sessions.steadyNow + holdMs;
    // Expired as on Redis: a loop window lives its TTL after its last record.
    if (state.windowExpiresAt !== 0 && state.windowExpiresAt <= t) {
      windowEntries.forget(state);
      state.window = new StreakIndex();
      state.windowExpiresAt = 0;
    }
    return state;
  }

  return {
    beginAttempt({ scope, op, claim, budget, block }) {
      const t = now();
      endedTurns.began(scope);
      const state = session(scope, t);
      const key = opKey(op);
      const streak = state.window.streak(key, t);
      // A call refused for the probe another holds takes nothing; one that runs takes the probe.
      const probe = (take: boolean) => (block && probeDue(streak, block) ? (state.probes ??= new ProbeClaims()).step(key, streak, block, t, take) : {});
      const held = probe(false);
      if (held.probeHeldMs !== undefined) return { streak, ...held };
      if (!claim && !budget) return { streak, ...probe(true) };
      // A call answered from an existing record runs nothing: it is not counted against a budget.
      const existing = claim && records.find(keyOf(scope), claim.key, t);
      if (existing !== undefined) return { streak, claim: existing };
      let budgets: Map<string, number> | undefined;
      let used = 0;
      if (budget) {
        // Budget counts live a TTL after the last counted call, as on Redis.
        if (state.budgetsExpireAt <= t) state.budgets = state.budgetMarks = undefined;
        budgets = state.budgets ??= new Map<string, number>();
        used = budgets.get(budget.id) ?? 0;
        if (used >= budget.max) return { streak, overBudget: true };
      }
      // Before the count: a claim refused (too many running) leaves nothing counted, and its call
      // fails closed, as on a Redis out of memory.
      if (claim && !records.claim(keyOf(scope), claim.key, claim.owner ?? '', t + claim.leaseMs, t)) {
        return Promise.reject(new StoreUnavailableError(`the memory store holds ${bounds.maxClaims} idempotency claims in progress (maxClaims): no other is taken until one of them ends`, { reason: 'full' }));
      }
      if (!budget) return { streak, claim: CLAIMED, ...probe(true) };
      budgets!.set(budget.id, used + 1);
      if (budget.token !== undefined) markCounted(state, `${budget.id}\0${budget.token}`, t + (budget.tokenLeaseMs ?? DEFAULT_TOKEN_LEASE_MS), t);
      state.budgetsExpireAt = t + budgetTtlMs;
      keepUntil(state, state.budgetsExpireAt);
      const budgetLeft = budget.max - used - 1;
      return claim ? { streak, claim: CLAIMED, budgetLeft, ...probe(true) } : { streak, budgetLeft, ...probe(true) };
    },
    finishAttempt(step) {
      const { scope, op, record, spill, memory, unusedProbe } = step;
      const t = now();
      // Its session ended since its turn began: its record is kept (a retry is replayed, not run again), without a handle.
      const ended = endedTurns.endedSince(scope, keyOf(scope), t);
      const idempotency = ended ? withoutLostHandle(step) : step.idempotency;
      // Records are kept apart from the session: they outlive its eviction.
      let keptOut = false;
      if (idempotency?.action === 'release') records.release(keyOf(scope), idempotency.key, idempotency.owner, t);
      else if (idempotency) {
        const outcome: FinishedOutcome = idempotency.action === 'complete' ? { state: 'completed', result: idempotency.result } : UNKNOWN;
        const expiresAt = t + idempotency.ttlSeconds * 1000;
        if (idempotency.action === 'complete' && idempotency.late) keptOut = !records.settle(scope.tenant, keyOf(scope), idempotency.key, idempotency.owner ?? '', outcome, expiresAt, t);
        else records.finish(scope.tenant, keyOf(scope), idempotency.key, outcome, expiresAt, t, idempotency.owner);
      }
      const key = opKey(op);
      if (ended) {
        const left = sessions.get(keyOf(scope));
        if (unusedProbe !== undefined) left?.probes?.free(key, unusedProbe);
        return { streak: left ? left.window.streak(key, t) : NO_STREAK, ...(spill ? { spillRefused: true as const } : {}), ...(keptOut ? { keptOut: true as const } : {}) };
      }
      const state = session(scope, t);
      if (unusedProbe !== undefined) state.probes?.free(key, unusedProbe);
      if (record) {
        const until = record.waitMs === undefined ? 0 : t + record.waitMs;
        state.window.add(key, windowKey(record.result), record.failed, record.counts !== false, t, until, record.retry === true, record.window, record.refused === true);
        state.windowExpiresAt = t + windowTtlMs;
        windowEntries.recorded(state, t, sessions.steadyNow);
      }
      if (spill) {
        const results = (state.results ??= new Map<string, Expiring<Spilled>>());
        const entry = { value: { text: spill.text, index: indexChunks(spill.text) }, expiresAt: t + spill.ttlSeconds * 1000 };
        results.set(spill.handle, entry);
        evicted.forget(scope.tenant, spill.handle);
        evictOldest(results, () => results.size > maxResults, (handle) => {
          spilled.drop(results, handle);
          results.delete(handle);
        });
        const sessionKey = keyOf(scope);
        spilled.add(scope.tenant, results, spill.handle, entry, spill.text.length, t, () => sessions.get(sessionKey) === state);
        keepUntil(state, entry.expiresAt);
      }
      if (memory) {
        const entries = (state.memory ??= []);
        // Expired entries go from the old end (entries are in time order), not only hidden on read.
        while (entries.length > 0 && entries[0]!.expiresAt <= t) memoryChars.drop(entries.shift()!);
        const entry = memoryEntry(scope.tenant, entries, memory.entry, t + memory.ttlSeconds * 1000);
        entries.push(entry);
        keepUntil(state, entry.expiresAt);
        // shift() drops the oldest in place (splice() would copy the dropped ones out).
        while (entries.length > memory.max) memoryChars.drop(entries.shift()!);
        memoryChars.add(entry, t);
      }
      const streak = state.window.streak(key, t);
      return keptOut ? { streak, keptOut: true } : { streak };
    },
    giveBackBudget(scope, budgetId, token) {
      // A session evicted or ended took its counts with it: nothing to give back (none is made).
      const state = sessions.get(keyOf(scope));
      const key = `${budgetId}\0${token}`;
      const until = state?.budgetMarks?.get(key);
      if (until === undefined) return false;
      state!.budgetMarks!.delete(key);
      const t = now();
      const used = state!.budgets?.get(budgetId) ?? 0;
      if (until <= t || state!.budgetsExpireAt <= t || used <= 0) return false;
      state!.budgets!.set(budgetId, used - 1);
      return true;
    },
    findRecord(scope, key) {
      return records.find(keyOf(scope), key, now())?.state;
    },
    async readResult(tenant, handle) {
      const scope = handleScope(tenant, handle);
      return scope ? live(sessions.get(keyOf(scope))?.results?.get(handle), now())?.text : undefined;
    },
    async readResultPage(tenant, handle, offset, limit) {
      const scope = handleScope(tenant, handle);
      const spilled = scope ? live(sessions.get(keyOf(scope))?.results?.get(handle), now()) : undefined;
      return spilled && pageOf(spilled.text, spilled.index, offset, limit);
    },
    evictedResult: (tenant, handle) => (evicted.has(tenant, handle, now()) ? eviction : undefined),
    async memory(scope) {
      const t = now();
      return (sessions.get(keyOf(scope))?.memory ?? []).filter((e) => e.expiresAt > t).map((e) => e.value);
    },
    async endSession(scope) {
      const key = keyOf(scope);
      const state = sessions.get(key);
      // Its loop window leaves the windows' bound with it (LiveSessions' onEvict).
      if (state) {
        for (const entry of state.memory ?? []) memoryChars.drop(entry);
        if (state.results) spilled.forget(state.results);
      }
      sessions.delete(key);
      records.endSession(key, now());
      endedTurns.ended(key, now());
      await ends.notify(scope);
    },
    onSessionEnd: (listener) => ends.add(listener),
    tenantSessions: (tenant) => tenantSessionIds(tenant, [sessions.keys(), records.sessions()]),
    ...localTenantErasures(bounds.logger),
    async close() {
      sessions.clear();
      records.clear();
      memoryChars.clear();
      windowEntries.clear();
      evicted.clear();
      endedTurns.clear();
    },
  };
}
