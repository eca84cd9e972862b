import { getHeapStatistics } from 'node:v8';
import type { Logger } from '../log';
import { checkInteger } from '../options/integer-option';
import { DEFAULT_MAX_EVICTED_HANDLES } from './evicted-handles';

/** Options of the in-memory store. */
export interface MemoryStoreOptions {
  /**
   * Sessions kept. A session's state lives until `windowTtlSeconds` after its last call (longer
   * while its budget counts, a spilled result or a memory entry live). A new session is never
   * refused: when one needs room, the expired sessions go, then those idle past
   * `sessionHoldSeconds`, longest idle first, then, if every session was used within its hold, the
   * least recently used of the tenants holding the most, down to an equal share (LiveSessions). An
   * evicted session's loop window and budget counts start again from zero; so other tenants'
   * traffic restarts those of a session in use only while its tenant holds more than an equal
   * share. Its idempotency records are kept apart, see `maxRecords`. @default 10000
   */
  readonly maxSessions?: number;
  /** How long after its last call a session is kept before idle ones are chosen to make room, in seconds. @default 3600 */
  readonly sessionHoldSeconds?: number;
  /** How long a session's loop window lives after its last record, in seconds, as on Redis. @default 86400 */
  readonly windowTtlSeconds?: number;
  /** Idempotency records kept per session before the oldest finished one is evicted. @default 10000 */
  readonly maxRecordsPerSession?: number;
  /**
   * Finished idempotency records (completed, or outcome unknown) kept across all sessions, each at
   * most its TTL. Past it (or `maxRecordChars`), until a tenth below it, the expired records go,
   * then the oldest records of the tenants holding more than an equal share, down to it, as for
   * `maxSessions`: so another tenant's traffic evicts a tenant's records only while that tenant
   * holds more than an equal share (a flood evicts the flooder's own oldest). @default 200000
   */
  readonly maxRecords?: number;
  /**
   * Characters of finished idempotency records kept across all sessions (their keys and stored
   * results, each output up to its tool's max_result_chars): past it records go as past
   * `maxRecords`, by the tenants' shares of the characters; the record just written is kept, even
   * alone past the budget. @default 67108864 (64 Mi, ~128 MiB), scaled to the heap (`heapLimitBytes`)
   */
  readonly maxRecordChars?: number;
  /**
   * Idempotency claims in progress held at once across all sessions. A claim is never evicted (its
   * side effect may be running): past this bound a new claim is refused with a
   * StoreUnavailableError, so its call fails closed (STORE_UNAVAILABLE, not executed), as on a Redis
   * out of memory. @default 131072 (every call of 1,024 turns of 128 calls at once)
   */
  readonly maxClaims?: number;
  /**
   * How long a session's budget counts (`budget:` policies) live after its last counted call, in
   * seconds, as on Redis (where they expire with the loop window's TTL). @default 86400
   */
  readonly budgetTtlSeconds?: number;
  /** Spilled results kept per session before the oldest is evicted. @default 1000 */
  readonly maxResultsPerSession?: number;
  /**
   * Characters of spilled results kept across all sessions (a result may be 16 Mi characters, kept
   * its TTL). Past it, until a tenth below it, the expired spills go, then the oldest spills of the
   * tenants holding more than an equal share of the characters, down to it, as for `maxRecords`.
   * Two-byte text takes 2 bytes a character: 128 Mi characters were up to 256 MiB, more than the
   * whole heap node gives a 512Mi pod. @default 33554432 (32 Mi, ~64 MiB), scaled to the heap (`heapLimitBytes`)
   */
  readonly maxSpilledChars?: number;
  /**
   * Result handles remembered as evicted for room (past `maxSpilledChars`), so that ReadResult of
   * one says it was evicted, and under which budget, rather than "not found (it may have
   * expired)"; the oldest evictions are forgotten first, and each once its spill would have
   * expired. About 100 to 500 bytes of heap each (a handle holds its session id). @default 10000
   */
  readonly maxEvictedHandles?: number;
  /**
   * Characters of trajectory-memory entries kept across all sessions (each session keeps its
   * max_memory_entries for their TTL, a day by default: ~2 bytes of heap per character). Past it,
   * until a tenth below it, the expired entries go, then the oldest entries of the tenants holding
   * more than an equal share of the characters, down to it, as for `maxSpilledChars`: so one
   * tenant's flood of memory writes evicts its own oldest entries. @default 16777216 (16 Mi, ~32 MiB), scaled to the heap (`heapLimitBytes`)
   */
  readonly maxMemoryChars?: number;
  /**
   * Loop-window entries kept across all sessions (each session keeps its loop_window for a day,
   * 330 to 600 bytes of heap each). A window is useful only whole, so past it whole windows start
   * again empty until a tenth below it: those of sessions idle past `sessionHoldSeconds` first,
   * least recently recorded first; then, if all left are in use, those of the tenants holding the
   * most entries, least recent first, down to an equal share (as for `maxSessions`: another
   * tenant's traffic restarts the window of a session in use only while its tenant holds more than
   * an equal share). Its loop detection then counts from zero. @default 100000 (~60 MiB), scaled to the heap (`heapLimitBytes`)
   */
  readonly maxWindowEntries?: number;
  /**
   * How long a session's end mark lives after EndSession, in seconds: a call of the session that
   * began before the end and finishes within it writes only its idempotency record (not its memory
   * entry, spilled result or loop record). A call running longer than this (a tool timeout past a
   * day) writes them as before. @default 86400
   */
  readonly endMarkSeconds?: number;
  /** End marks kept at once (each ~100 bytes); past it the oldest tenth go. @default 100000 */
  readonly maxEndedSessions?: number;
  /**
   * The heap the store's defaults are sized for, in bytes. The four store-wide budgets above
   * (`maxRecordChars`, `maxSpilledChars`, `maxMemoryChars`, `maxWindowEntries`) take up to
   * ~272 MiB of heap at their defaults, more than a 512Mi pod's whole heap (the Helm chart gives
   * it ~380 MiB): each one left unset is scaled down so that together they take at most
   * {@link HEAP_SHARE} of it. @default V8's heap_size_limit (what --max-old-space-size sets)
   */
  readonly heapLimitBytes?: number;
  /** Clock, for tests. */
  readonly now?: () => number;
  /** Where a failing session-end listener is reported. @default none */
  readonly logger?: Logger;
}

type Bound = Exclude<keyof MemoryStoreOptions, 'now' | 'logger' | 'heapLimitBytes'>;

/** The memory store's options with every bound filled. */
export type ResolvedMemoryStoreOptions = Readonly<Record<Bound, number>> & Pick<MemoryStoreOptions, 'now' | 'logger'> & {
  /** What the unset store-wide budgets' defaults were multiplied by (1 on a heap large enough). */
  readonly heapScale: number;
  /** Whether `maxSpilledChars` was given, not its default (scaled): what raises it differs (spillBudgetRemedy). */
  readonly spilledCharsGiven: boolean;
};

const DEFAULTS: Readonly<Record<Bound, number>> = {
  maxSessions: 10_000,
  sessionHoldSeconds: 3600,
  windowTtlSeconds: 86_400,
  maxRecordsPerSession: 10_000,
  maxRecords: 200_000,
  maxRecordChars: 64 * 1024 * 1024,
  maxClaims: 1024 * 128,
  budgetTtlSeconds: 86_400,
  maxResultsPerSession: 1000,
  maxSpilledChars: 32 * 1024 * 1024,
  maxEvictedHandles: DEFAULT_MAX_EVICTED_HANDLES,
  maxMemoryChars: 16 * 1024 * 1024,
  maxWindowEntries: 100_000,
  endMarkSeconds: 86_400,
  maxEndedSessions: 100_000,
};

/** The share of the heap the store-wide budgets may take together at their defaults. */
export const HEAP_SHARE = 0.4;

/** Heap bytes per unit of each store-wide budget (a character of two-byte text; a window entry). */
const HEAP_BYTES_PER_UNIT: Readonly<Partial<Record<Bound, number>>> = {
  maxRecordChars: 2,
  maxSpilledChars: 2,
  // Measured with the entry, its string and the budget's count: ~1.1 (one-byte text) and ~2.1 (two-byte) at
  // 1,600-character entries, ~1.6 and ~2.6 at 200; short entries take more (~3.7 at 50 characters).
  maxMemoryChars: 2,
  maxWindowEntries: 600,
};

/** What the store-wide budgets' defaults are multiplied by for a heap of `heapLimitBytes`: at most 1. */
export function heapScale(heapLimitBytes: number): number {
  let bytes = 0;
  for (const [name, perUnit] of Object.entries(HEAP_BYTES_PER_UNIT)) bytes += DEFAULTS[name as Bound] * perUnit;
  return Math.min(1, (HEAP_SHARE * heapLimitBytes) / bytes);
}

/**
 * Fills the unset bounds with their defaults (the store-wide budgets scaled to the heap, see
 * `heapLimitBytes`) and rejects a bound that is not a positive integer.
 */
export function resolveMemoryStoreOptions(options: MemoryStoreOptions): ResolvedMemoryStoreOptions {
  const bounds = { ...DEFAULTS };
  const scale = heapScale(options.heapLimitBytes ?? getHeapStatistics().heap_size_limit);
  for (const name of Object.keys(DEFAULTS) as Bound[]) {
    const fallback = HEAP_BYTES_PER_UNIT[name] === undefined ? DEFAULTS[name] : Math.max(1, Math.floor(DEFAULTS[name] * scale));
    bounds[name] = checkInteger(`memory store option ${name}`, options[name] ?? fallback);
  }
  return { ...bounds, now: options.now, logger: options.logger, heapScale: scale, spilledCharsGiven: options.maxSpilledChars !== undefined };
}

/**
 * What raises the spill budget (`maxSpilledChars`), as ReadResult of a handle evicted for room
 * tells an operator: dispatchd's `limits.max_spilled_chars`, or else a larger heap when the
 * default was scaled down to it, or Redis.
 */
export function spillBudgetRemedy(bounds: ResolvedMemoryStoreOptions): string {
  if (bounds.spilledCharsGiven) return 'raise limits.max_spilled_chars (the memory store option maxSpilledChars) to keep more, or read results sooner';
  const scaled = bounds.heapScale < 1 ? ', scaled down to this heap' : '';
  return `that budget is limits.max_spilled_chars, ${DEFAULTS.maxSpilledChars} characters by default${scaled}: raise it (with the heap: node --max-old-space-size), read results sooner, or run with Redis (--redis), whose results are kept under its own memory bounds (docs/redis.md)`;
}
