import type { SessionEndListener } from './session-end-listeners';
import type { TextPage } from './spilled-text';
import type { TenantErasures } from './tenant-erasures';

export { StoreUnavailableError } from './store-refusal';

/** The tenant and session a piece of state belongs to; every store key is namespaced by both. */
export interface SessionScope {
  readonly tenant: string;
  readonly sessionId: string;
}

/** A finished result kept for idempotent replay. */
export interface StoredResult {
  readonly output: string;
  readonly isError: boolean;
  /** The error JSON fields, when the result is an error. */
  readonly errorKind?: number;
  readonly errorMessage?: string;
  readonly recoverable?: boolean;
  readonly suggestion?: string;
  readonly resolvedToolName: string;
  readonly truncated: boolean;
  readonly resultHandle: string;
  readonly durationMs: number;
  /** The result's warnings, absent when it had none (and in records of older versions). */
  readonly warnings?: readonly string[];
  /** What the loop window compared of a bounded result (its whole text's hash), for its replays; absent for others. */
  readonly loopRecord?: string;
  /** A digest of the whole arguments of the call that ran, when `key_fields` key it by some: a replay for other ones says so. */
  readonly argumentsDigest?: string;
}

/** What an idempotency claim found. */
export type ClaimOutcome =
  | { readonly state: 'claimed' }
  | { readonly state: 'completed'; readonly result: StoredResult }
  | { readonly state: 'in_progress' }
  | { readonly state: 'unknown' };

/**
 * What a live idempotency record holds, as {@link Store.findRecord} reads it: the states a claim
 * answers from without running the call.
 */
export type RecordState = Exclude<ClaimOutcome, { state: 'claimed' }>['state'];

/**
 * How many identical results a (tool, parameter) operation has in a row, newest first, counting
 * only the records that count (see FinishAttempt.record.counts), and how long ago, by the store's
 * clock, so that a block can end after its cool-down (DESIGN section 6).
 */
export interface LoopStreak {
  readonly count: number;
  /** Whether the repeated result was a failure. */
  readonly failed: boolean;
  /** A failed streak's age: ms since its newest failure was recorded. Absent for others. */
  readonly sinceMs?: number;
  /** Ms left of the wait the op's newest record told the model (FinishAttempt.record.waitMs); absent when none is left. */
  readonly waitMs?: number;
  /**
   * How many of the op's newest records in a row told the model to call again later (a wait) and
   * carry the same result as the newest, counted or not; absent when the newest told none. A
   * model that keeps waiting as told is counted again once this reaches the tool's stop_threshold.
   */
  readonly toldRun?: number;
  /**
   * The streak is of refusals before the call's store step (a policy's, its arguments', an unknown
   * name's: FinishAttempt.record.refused), with `failed`: they count toward the warning and the
   * stop, but arm no block (no sinceMs, no probe), since the call never ran: a call of the op
   * the policy lets through is not refused LOOP_BLOCKED for the refusals before it.
   */
  readonly refused?: true;
}

/** The first store step of an attempt: the loop pre-check read and, optionally, the claim. */
export interface BeginAttempt {
  readonly scope: SessionScope;
  /**
   * The (tool, primary parameter) operation: the tool name, NUL, the parameter's canonical JSON
   * (see `loopOp`). Unbounded: the Redis store keeps it hashed, the memory store as it is when short.
   */
  readonly op: string;
  /**
   * The idempotency claim: `owner` names this attempt's claim (unique per attempt), so that only
   * it can release the claim again; without one the claim is anyone's to release.
   */
  readonly claim?: { readonly key: string; readonly leaseMs: number; readonly owner?: string };
  /**
   * A call budget of the session (a `budget:` policy) this call counts against: it is counted,
   * unless `max` calls were counted already, when the step counts nothing, takes no claim and
   * answers `overBudget`. With `token` (the call's, the same at each of its attempts) a call is
   * counted once: a step that finds its token counted already counts nothing and answers the calls
   * left (never `overBudget`), so the retry of an attempt whose step got no answer but ran all the
   * same (a slow Redis) is not counted twice; the token is remembered `tokenLeaseMs` (the call's
   * lease) from its attempt's step, and so long can the count be given back (Store.giveBackBudget).
   * The memory store counts every step (it answers all it counts) and keeps the token for giveBackBudget only.
   */
  readonly budget?: SessionBudget & { readonly token?: string; readonly tokenLeaseMs?: number };
  /**
   * The block of the op's failed streaks (DESIGN section 6), for its probe: once the streak has
   * `threshold` counted failures and `cooldownMs` have passed since the newest (and no wait it
   * told is left), one call runs once more. The step hands that probe to the first call only,
   * held `leaseMs` or until a newer failure is recorded (see BeginAttemptResult.probeHeldMs).
   */
  readonly block?: LoopBlock;
}

/** A tool's block of failed streaks as beginAttempt needs it (BeginAttempt.block). */
export interface LoopBlock {
  readonly threshold: number;
  readonly cooldownMs: number;
  readonly leaseMs: number;
  /**
   * Names the call that takes the probe (unique per attempt), so that only it can give the probe
   * back (FinishAttempt.unusedProbe); without one the probe is held until a newer failure or its lease's end.
   */
  readonly holder?: string;
  /**
   * Only reads whether another call holds the probe (probeHeldMs); takes none: the call does not
   * run yet (countBeforeAsking, before an approver is asked), and takes it at its run's own step.
   */
  readonly peek?: boolean;
}

/** How long a counted call's token is remembered (BeginAttempt.budget.tokenLeaseMs) when no lease is given: 10 minutes. */
export const DEFAULT_TOKEN_LEASE_MS = 600_000;

/** A budget of calls per session: its name in the session (one per policy) and its size. */
export interface SessionBudget {
  readonly id: string;
  readonly max: number;
}

/**
 * What the idempotency record becomes at the end of an attempt. A completion or UNKNOWN mark with
 * `owner` (the claim's) is written over that claim or an empty key, never over another attempt's
 * claim or record (Redis: a late write after a lapsed lease; memory's attempts end within theirs).
 */
export type IdempotencyFinish =
  /** `late`: only over `owner`'s own UNKNOWN mark (its tool answered after the attempt's timeout: late-answer.ts), else kept out. */
  | { readonly key: string; readonly action: 'complete'; readonly result: StoredResult; readonly ttlSeconds: number; readonly owner?: string; readonly late?: true }
  | { readonly key: string; readonly action: 'unknown'; readonly ttlSeconds: number; readonly owner?: string }
  /**
   * Gives up a claim that did not run: deletes the record only while it is still in progress and,
   * with `owner` (not empty), still that claim (a late release never deletes a later claim or a result).
   */
  | { readonly key: string; readonly action: 'release'; readonly owner?: string };

/** The second store step of an attempt: every write, in one round trip. */
export interface FinishAttempt {
  readonly scope: SessionScope;
  readonly op: string;
  /**
   * The result recorded in the loop window, absent when nothing ran: the output text, or the
   * error's kind and message; repeats are counted by equal `result`, which stores compare by hash
   * (or, the memory store, as it is when short). `counts: false` records a failure that neither
   * adds to the op's streak nor breaks it (a call that waited as it was told: see loopRecordOf);
   * `waitMs`, the wait the model was told after it (a call within it is early); `retry`, a record of
   * a retry within one call (it tells its newer wait, but is no call of the model's: it does not
   * add to LoopStreak.toldRun); `refused`, with `failed`, a refusal of the call before its store
   * step, which counts as a failure but arms no block (LoopStreak.refused).
   */
  readonly record?: { readonly result: string; readonly failed: boolean; readonly window: number; readonly counts?: false; readonly waitMs?: number; readonly retry?: true; readonly refused?: true };
  readonly idempotency?: IdempotencyFinish;
  /** The whole text of a bounded result, for ReadResult. */
  readonly spill?: { readonly handle: string; readonly text: string; readonly ttlSeconds: number };
  /** A trajectory entry for a success. */
  readonly memory?: { readonly entry: string; readonly max: number; readonly ttlSeconds: number };
  /**
   * The holder (LoopBlock.holder) of the op's probe this attempt took and did not use: its tool
   * did not run (refused after beginAttempt, cancelled) or it records nothing. The probe is freed
   * while that holder still holds it, so the next call runs once more; a late one frees no other's.
   */
  readonly unusedProbe?: string;
}

/**
 * Shared state of the pipeline. Each method is one atomic step (one round trip on Redis);
 * a failure rejects with a StoreUnavailableError within the store's timeout. The two steps of
 * every attempt may answer synchronously (the memory store does), so the hot path awaits only
 * a store that does I/O; callers handle both (`await` does).
 */
/** What beginAttempt gives: the op's loop streak, and the claim's outcome when one was asked. */
export interface BeginAttemptResult {
  readonly streak: LoopStreak;
  readonly claim?: ClaimOutcome;
  /** The session's budget was spent before this call: nothing was counted or claimed. */
  readonly overBudget?: true;
  /** With a budget that counted this call: the calls it has left. */
  readonly budgetLeft?: number;
  /** With `block`: this call took the block's probe (it runs once more). */
  readonly probeClaimed?: true;
  /** With `block`: another call holds the block's probe, for so many ms more at most (this one is refused). */
  readonly probeHeldMs?: number;
}

/** What finishAttempt gives: the op's loop streak after the record. */
export interface FinishAttemptResult {
  readonly streak: LoopStreak;
  /** The store had no room for the step's spill, not kept (a completion without its handle was): the result must not name it. */
  readonly spillRefused?: true;
  /** The completion or UNKNOWN mark was not written: another attempt's claim or record holds its key (or, `late`, no UNKNOWN of its owner does). */
  readonly keptOut?: true;
}

/** A spill evicted for room, as ReadResult tells it (Store.evictedResult). */
export interface ResultEviction {
  /** The budget of characters the replica's spills are kept under. */
  readonly budgetChars: number;
  /** What raises the budget, for an operator ("raise the memory store option maxSpilledChars"). */
  readonly remedy: string;
}

export interface Store extends TenantErasures {
  /**
   * Other replicas share this store (Redis): a turn retried on another one finds its records, so
   * a draining replica may end a turn early (UNAVAILABLE SHUTTING_DOWN) rather than start more of
   * it. A store of its own (memory) dies with its replica: a retried turn would run again what had
   * run, so a draining replica finishes its turns within the grace period instead.
   */
  readonly shared?: true;
  /** Whether its connection is up now (Redis: `ready`), for `dispatch_store_up`; absent for memory. */
  readonly connected?: () => boolean;
  beginAttempt(step: BeginAttempt): BeginAttemptResult | Promise<BeginAttemptResult>;
  /** Gives the op's streak after the record. */
  finishAttempt(step: FinishAttempt): FinishAttemptResult | Promise<FinishAttemptResult>;
  /**
   * Gives back the count of a call against a session budget, counted by a beginAttempt with its
   * `token` before an approver was asked, when the approval was not granted (docs/policies.md,
   * "Session budgets"): the count goes down by one only while that call's mark (its token, counted
   * in the counts' current life) is there, and the mark goes, so a second give-back, or one after
   * the counts expired, the session ended or (the memory store) was evicted, does nothing; the
   * count never goes below zero. Resolves true when a count was given back. Rejects like the
   * other steps (the count then stays).
   */
  giveBackBudget(scope: SessionScope, budgetId: string, token: string): boolean | Promise<boolean>;
  /**
   * The state of the session's live idempotency record of `key`, or undefined when there is none: a
   * read that changes nothing (one GET on Redis), for the pipeline to learn, before it refuses or
   * asks about a side-effecting call, whether the claim would answer it from a record instead of
   * running it (docs/policies.md, "Calls that ran already"). Rejects like the other steps.
   */
  findRecord(scope: SessionScope, key: string): RecordState | undefined | Promise<RecordState | undefined>;
  /** The whole spilled text of a result handle of this tenant, or undefined. */
  readResult(tenant: string, handle: string): Promise<string | undefined>;
  /**
   * The code points [offset, offset + limit) of the spilled text of a result handle of this
   * tenant, with the text's length, or undefined: at a cost of about the page, not of the whole
   * text (a spill is kept in chunks, see spilled-text.ts). An offset past the end gives ''.
   */
  readResultPage(tenant: string, handle: string, offset: number, limit: number): Promise<TextPage | undefined>;
  /**
   * Why a handle of this tenant that readResultPage did not find is gone, when the store evicted
   * its spill for room (a budget across sessions), not for its TTL nor its session's end; else
   * undefined. Absent on a store that never evicts a live spill for another's (Redis refuses a new
   * spill instead, and the result then has no handle).
   */
  evictedResult?(tenant: string, handle: string): ResultEviction | undefined;
  /** The session's trajectory memory, oldest first. */
  memory(scope: SessionScope): Promise<string[]>;
  /**
   * Clears the session's idempotency records, loop window, spilled results and memory, then tells
   * the session-end listeners and waits for the promises they return, at most the store's timeout
   * (1 s by default). The listeners are told even when the store step fails or times out (it may
   * have reached the store), and the rejection follows.
   */
  endSession(scope: SessionScope): Promise<void>;
  /**
   * Calls `listener` with each session ended here (before endSession resolves, see there) and, on a
   * store replicas share, with each one another replica ended, as its announcement arrives (nothing
   * waits for it then): what a replica keeps of a session beside the store (memoized results, scratch
   * directories) goes with it.
   */
  onSessionEnd(listener: SessionEndListener): void;
  /**
   * The ids of `tenant`'s sessions the store holds anything of (idempotency records or claims, a
   * loop window, results, memory, budgets), in batches, for EraseTenant, which ends each. A session
   * may come more than once (ending it again is harmless), and one first used during the walk may
   * not come at all. Rejects with a StoreUnavailableError when the store fails.
   */
  tenantSessions(tenant: string): AsyncIterable<readonly string[]>;
  /**
   * On a store replicas share: tells the other replicas that this one wrote `resource` (a memo
   * cache's resource name), without waiting; absent on a store of one replica. Best effort: a lost
   * announcement leaves their memoized reads of it until their TTL.
   */
  announceWrite?(resource: string): void;
  /** On a store replicas share: calls `listener` with each resource another replica announced written. */
  onWriteAnnounced?(listener: (resource: string) => void): void;
  /**
   * On a store replicas share: calls `listener` when announcements of session ends and writes may
   * have been missed (the subscription hearing them moved, or its connection dropped), once it
   * hears them again.
   */
  onAnnouncementsMissed?(listener: () => void): void;
  close(): Promise<void>;
}
