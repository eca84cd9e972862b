import { ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, HardError } from '../errors';
import { canonicalJson } from '../json';
import type { ResolvedTool } from '../registry';
import { claimRefusedMessage, NO_STREAK, StoreUnavailableError, type ClaimOutcome, type LoopStreak } from '../store';
import { budgetToCount, type BudgetProgress, type CountedBudget } from './budget-count';
import { newId as newOwner } from './owner-ids';
import { memoryEntry } from './memory-entry';
import type { AttemptObserver, CallObserver } from './observer';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import { applyPreHooks } from './pre-attempt';
import { giveBackAsked, givingBackOnAbort, readyToAsk } from './budget-reserve';
import { errorResult, fullTextNotKept, replayedResult } from './results';
import { callBreakerKey } from './breaker-key';
import { AttemptContext, CallKey, keyToolOf, type CalledTool, type ReadKeys } from './attempt-context';
import { runGuarded } from './signals';
import { gated, gateSkip, whileHeld, type GateSkip } from './gated';
import { memoServes } from './memo-hit';
import { budgetWarning, claimRefusal, overBudget } from './refusals';
import { addLoopWarning, dropFailureWarnings, loopRecordOf, noteLoopWarning, recordReplay, sameFailure, type FailureWarnings } from './replay-record';
import { loopOp } from './loop-op';
import { blockedWaitMs, blockLeftMs, blockRefusal, cameEarly, loopBlockOf, loopStop, toldInTurn, toldWaitMs, windowRecord, withWait } from './loop-block';
import { checkMayStart } from './turn-error';
import { countsForBreaker, withPostNotes } from './attempt-end';
import { AnsweredByRecord } from './answered-by-record';
import { failedBefore, finished } from './attempt-outcome';
import { giveBack } from './give-back';
import { breakerOpen, breakerTold } from './breaker-refusal';
import { refusedAttempt } from './refused-loops';
import { storeWarn } from './store-warn';
import { claimEnd, replayedError, replayNote, runFailure, runResult } from './attempt-run';
import { lingerPastDeadline, outlivedAttempt } from './outlived-attempt';
import { lateWork, recordLateAnswer } from './late-answer';

/** What the attempts of one call share: its budgets counted (BudgetProgress), and what follows. */
export interface CallProgress extends BudgetProgress, FailureWarnings, CalledTool {
  /** The loop operation and record of the call's last attempt, when it failed (see sameFailure). */
  lastFailure?: { readonly op: string; readonly record: string };
  /** The error of the call's last attempt that ran its tool and failed, and the tool's name (see failedThenRefused). */
  ranAndFailed?: { readonly tool: string; readonly error: DispatchError };
}

/** The result of one attempt and, when it failed, why. */
export interface AttemptResult {
  readonly result: ToolResult;
  readonly error?: DispatchError;
  /** How long the executor ran its tool (not the waits before it), when it did: a retry's room (retryRefusal). */
  readonly ranMs?: number;
}

const LEASE_MARGIN_MS = 5_000;
const MEMORY_TTL_SECONDS = 86_400;

/**
 * One attempt of a call, steps 1-11 of DESIGN section 3: TOOL_PRE, hooks, loop pre-check, breaker
 * gate, idempotency claim, execution under the tool's timeout, bounding, the one store write,
 * TOOL_POST, post hooks, health. Throws HardError for LOOP_DETECTED and cancellation.
 * `read`, when known, is what `rawArgs` were read as for `tool`: kept when the hooks answer at
 * once and leave the arguments as they were (the rules copy before they modify).
 */
export function runAttempt(deps: PipelineDeps, turn: TurnContext, obs: CallObserver, callId: string, tool: ResolvedTool, rawArgs: unknown, attempt: number, warnings: string[], progress: CallProgress, read?: ReadKeys): Promise<AttemptResult> {
  const started = performance.now();
  const attemptObs = obs.attempt(attempt, tool.name);
  // LOOP_DETECTED before an approver was asked (countBeforeAsking) ends the RPC as the store step's does.
  // One its breaker refused before it was asked about (readyToAsk) is told as at the gate below; a policy's or hook's refusal is recorded in the loop window first (refused-loops.ts).
  const hookFailure = (error: unknown, e = DispatchError.from(error, 'before')) => (error instanceof HardError ? Promise.reject(error) : refusedAttempt(deps, turn, obs, tool, rawArgs, attempt, progress, e, warnings, () => failedBefore(attemptObs, callId, tool, e, attempt, started, warnings, breakerTold(e, tool, progress.ranAndFailed))));
  let args: unknown;
  try {
    args = applyPreHooks(deps, turn, obs, callId, tool, rawArgs, attempt, (ready) => readyToAsk(deps, turn, tool, ready, attempt, progress, warnings, (message) => obs.loopStop(attempt, message)), keyToolOf(tool, progress.calledTool));
  } catch (error) {
    return Promise.resolve(hookFailure(error));
  }
  // Not async itself: a call without hooks, resources or caps runs attemptWith's promise as it is.
  const run = (decided: unknown, reading: ReadKeys | undefined) => {
    const answered = decided instanceof AnsweredByRecord ? decided : undefined;
    const ready = answered ? answered.args : decided;
    // Keyed by the arguments the tool receives, after the hooks and policies (as the version before
    // keyed them, so a retry across an upgrade finds its record; docs/policies.md, `modify`).
    // The planner's reading is of rawArgs: taken only when the attempt runs with them.
    const known = ready === rawArgs ? reading : undefined;
    const scope = turn.scope ?? { tenant: turn.tenant, sessionId: turn.sessionId };
    const callKey = new CallKey(scope, tool, ready, known?.canonical ?? canonicalJson(ready), known?.op, keyToolOf(tool, progress.calledTool));
    // In a parallel turn, the resource these arguments name (and a side-effecting call's key: a policy may have made two calls one) is held until the attempt ends.
    const held = turn.resources?.hold(tool.spec.resourceKey, ready, turn.signal, tool.readOnly ? undefined : callKey.value);
    const attemptNow = (claims: boolean, skip: GateSkip | undefined, recordOnly: DispatchError | undefined) => attemptWith(deps, turn, obs, attemptObs, callId, tool, ready, attempt, warnings, started, progress, callKey, claims, skip, recordOnly);
    const work = () => {
      // Decided once the resource is held (a write it waited for has evicted what it wrote), before
      // the slot and turn: an attempt that will not reach the tool skips them. A side-effecting
      // call its breaker refuses is let through for its record only (DESIGN section 5): its claim
      // answers it as with the breaker closed (a replay, IN_PROGRESS, OUTCOME_UNKNOWN); finding
      // none, it is given back and the call refused BREAKER_OPEN, which may fall back; a store
      // that cannot answer ends it STORE_UNAVAILABLE, which never falls back (a lookup taken for
      // "no record" on a store timeout let the fallback send a sent email again).
      if (!answered && !tool.readOnly && deps.guards.breaker.isOpen(callBreakerKey(turn.tenant, tool))) return attemptNow(true, ANSWERED_BY_RECORD, breakerOpen(deps, turn, tool));
      const claims = !tool.readOnly;
      const { slots, rates } = deps.guards;
      const skip = answered ? ANSWERED_BY_RECORD : slots || rates ? gateSkip(deps.guards, tool, callKey) : undefined;
      return (slots || rates) && !skip ? gated(slots, rates, tool, turn, () => attemptNow(claims, skip, answered?.refusal), (error) => giveBackAsked(progress, attempt).then(() => hookFailure(error))) : attemptNow(claims, skip, answered?.refusal);
    };
    return held === undefined ? work() : whileHeld(held, work);
  };
  // A hook that answers later (one given in code, the policy endpoint) may have changed them in place.
  return args instanceof Promise ? givingBackOnAbort(args.then((decided) => run(decided, undefined), hookFailure), progress, attempt) : run(args, read);
}

/** An attempt its record answers takes no slot or rate turn: it will not reach its tool. */
const ANSWERED_BY_RECORD: GateSkip = Object.freeze({});

/**
 * Steps 3-11 of an attempt, with the arguments the hooks left (keyed by `callKey`); `wantClaim`:
 * a side-effecting call whose breaker was not open, or whose record answers it; `skip`: why it
 * took no slot or turn, if so; `recordOnly`: the refusal of an attempt let through only for its
 * record (AnsweredByRecord, or its breaker open), should its claim find none.
 */
async function attemptWith(deps: PipelineDeps, turn: TurnContext, obs: CallObserver, attemptObs: AttemptObserver, callId: string, tool: ResolvedTool, args: unknown, attempt: number, warnings: string[], started: number, progress: CallProgress, callKey: CallKey, wantClaim: boolean, skip: GateSkip | undefined, recordOnly?: DispatchError): Promise<AttemptResult> {
  const scope = turn.scope ?? { tenant: turn.tenant, sessionId: turn.sessionId };
  const breaker = callBreakerKey(turn.tenant, tool);
  let streak: LoopStreak = NO_STREAK;
  let claimed = false;
  let storeDown = false;
  let toldBefore = false;
  let probeHeldMs: number | undefined;
  let probeTaken: true | undefined;
  const { canonicalArgs } = callKey;
  const op = callKey.op ?? loopOp(tool, args, canonicalArgs);
  // A retry of this call after it failed here was let in already: its own failures are not the
  // model's repeats, nor early, nor blocked. A block ends after its cool-down: one call then runs once, a probe.
  const ownRetry = progress.lastFailure?.op === op;
  // Claim owners: unique per attempt across replicas.
  const owner = newOwner();
  const giveBackTaken = () => giveBack(deps, scope, op, owner, claimed ? callKey.value : undefined, probeTaken);
  let claim: ClaimOutcome | undefined;
  let budget: CountedBudget | undefined;
  // Aborted while its hooks, slot or turn were awaited (a hook may ignore the signal), or dispatchd
  // began to drain meanwhile (nothing has run: the client retries elsewhere): no store step.
  checkMayStart(turn);
  try {
    // A call counts against its tool's budget once, at its first attempt of a tool under that
    // budget that gets this far (one refused by a cap or a rate limit before it did not count).
    // One answered from its record is not counted (and, its record gone, is refused uncounted).
    const askedCount = progress.countedBeforeAsking;
    if (askedCount) progress.countedBeforeAsking = undefined;
    budget = recordOnly ? undefined : budgetToCount(deps.guards.budgets?.of(tool), progress, tool.timeoutMs + tool.retry.maxBackoffMs + LEASE_MARGIN_MS);
    let begun = deps.store.beginAttempt({ scope, op, claim: wantClaim ? { key: callKey.value, leaseMs: tool.timeoutMs + LEASE_MARGIN_MS, owner } : undefined, budget, block: ownRetry ? undefined : loopBlockOf(tool, tool.timeoutMs + LEASE_MARGIN_MS, owner) });
    if (begun instanceof Promise) begun = await begun;
    if (begun.overBudget) return failedBefore(attemptObs, callId, tool, overBudget(tool, budget!), attempt, started, warnings);
    if (begun.budgetLeft !== undefined) {
      (progress.budgetsCounted ??= new Set()).add(budget!.id);
      deps.guards.budgets!.counted(scope, budget!, begun.budgetLeft);
      budgetWarning(tool, budget!, begun.budgetLeft, warnings);
    }
    ({ streak, claim, probeHeldMs, probeClaimed: probeTaken } = begun);
    // Refused for the probe another call took while it waited for its approver, or answered from the
    // record of an identical call that ran meanwhile (a replay, IN_PROGRESS, OUTCOME_UNKNOWN): counted nowhere.
    if ((probeHeldMs !== undefined || (claim !== undefined && claim.state !== 'claimed')) && askedCount?.attempt === attempt) await askedCount.giveBack();
    toldBefore = toldInTurn(turn, op);
    claimed = claim?.state === 'claimed';
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    storeWarn(deps.logger)(tool.readOnly ? 'store unavailable at claim; read-only call runs without the store, memory and loop record dropped' : 'store unavailable at claim', { tool: tool.name, error: error.message });
    if (!tool.readOnly) return failedBefore(attemptObs, callId, tool, new DispatchError(ErrorKind.STORE_UNAVAILABLE, claimRefusedMessage(error), { phase: 'before', recoverable: true, cause: error }), attempt, started, warnings);
    storeDown = true;
    const left = budget && deps.guards.budgets!.countHere(scope, budget);
    if (left !== undefined && left < 0) return failedBefore(attemptObs, callId, tool, overBudget(tool, budget!), attempt, started, warnings);
    if (left !== undefined) {
      (progress.budgetsCounted ??= new Set()).add(budget!.id);
      budgetWarning(tool, budget!, left, warnings);
    }
  }

  // Let through for a record that ended since: nothing runs unasked (or despite a block). A hook's
  // refusal (step 2) comes before the loop pre-check, an open breaker's (step 4) after it.
  const refuse = recordOnly && claimed ? () => giveBackTaken().then(() => failedBefore(attemptObs, callId, tool, recordOnly, attempt, started, warnings)) : undefined;
  if (refuse && recordOnly?.kind !== ErrorKind.BREAKER_OPEN) return refuse();
  const stop = loopStop(tool, streak);
  if (stop) {
    await giveBackTaken();
    obs.loopStop(attempt, stop.message);
    throw stop;
  }
  const blockLeft = ownRetry ? undefined : blockLeftMs(streak, tool);
  const blocked = blockLeft === undefined ? undefined : blockRefusal(streak, blockLeft, probeHeldMs);
  if (blocked) {
    await giveBackTaken();
    return failedBefore(attemptObs, callId, tool, blocked, attempt, started, warnings);
  }
  if (refuse) return refuse();
  // Its memo entry went stale while the store answered (a write, a session end): it takes its slot and turn now, and begins again.
  if (skip?.memoized && !memoServes(deps.guards.memo!, callKey.local, skip.memoized)) return giveBackTaken().then(() => gated(deps.guards.slots, deps.guards.rates, tool, turn, () => attemptWith(deps, turn, obs, attemptObs, callId, tool, args, attempt, warnings, started, progress, callKey, wantClaim, undefined), (e) => failedBefore(attemptObs, callId, tool, DispatchError.from(e, 'before'), attempt, started, warnings)));
  // A record answers before the breaker gate: its call does not reach the tool (nor takes a half-open probe).
  if (claim?.state === 'completed') {
    obs.replay(attempt);
    const note = replayNote(tool, claim.result, canonicalArgs);
    const result = replayedResult(callId, replayedError(tool, claim.result), attempt, Math.round(performance.now() - started), note === undefined ? warnings : [...warnings, note]);
    // A replay repeats the call's result: it counts in the loop window, as a memoized result does, so that a model re-sending the same
    // side-effecting call is stopped like any other loop. Its warning follows the replayed warnings and the call's own (both kept); the post hooks' notes come last, as on a call that ran.
    const after = await recordReplay(deps, scope, op, claim.result);
    if (after) addLoopWarning(after, tool, obs, attempt, result.warnings);
    return withPostNotes(deps, turn, tool, args, attempt, finished(attemptObs, result));
  }
  const refusal = claimRefusal(claim, tool);
  if (refusal) return failedBefore(attemptObs, callId, tool, refusal, attempt, started, warnings);
  // A side-effecting attempt that took no claim (its breaker was open at its start) never runs, even if the breaker let calls through since.
  const ticket = wantClaim || tool.readOnly ? deps.guards.breaker.tryAcquire(breaker, tool.timeoutMs) : undefined;
  if (ticket === undefined) {
    await giveBackTaken();
    const closed = breakerOpen(deps, turn, tool);
    // Refused after its own tool failed (its failures opened the breaker): the model reads that failure.
    return failedBefore(attemptObs, callId, tool, closed, attempt, started, warnings, breakerTold(closed, tool, progress.ranAndFailed));
  }

  // One read of the clock for the checks and the executor's deadline below.
  const wallNow = Date.now();
  if (turn.signal.aborted || wallNow >= turn.deadline) {
    // Cancelled, or past its deadline (a busy loop has not run its timer yet), while the store answered: nothing ran, its claim goes (not unknown).
    deps.guards.breaker.record(breaker, ticket, { ok: false, counts: false, durationMs: 0 });
    await giveBackTaken();
    throw HardError.cancelled();
  }
  let context: AttemptContext | undefined;
  // A claimed side-effecting attempt whose request reached its tool outlives its client's deadline (outlived-attempt).
  const linger = claimed ? lingerPastDeadline(turn, () => context) : undefined;
  const timeoutMs = linger ? tool.timeoutMs : Math.max(1, Math.min(tool.timeoutMs, turn.deadline - wallNow));
  const execStarted = performance.now();
  const run = await runGuarded(turn.signal, timeoutMs, (source) => deps.handler({ tool, args, memoized: skip?.memoized, ctx: (context = new AttemptContext(deps, turn, attemptObs, callId, attempt, callKey, source, wallNow + timeoutMs)) }), linger);
  if (run.kind === 'cancelled' && run.lingering) throw outlivedAttempt(deps, turn, tool, callId, attempt, { scope, op, key: callKey, owner, breaker, ticket }, run.lingering, execStarted, () => context);
  const text = run.kind === 'done' ? run.value.text : '';
  const cached = run.kind === 'done' && (run.value.cached ?? false);
  if (run.kind === 'done') dropFailureWarnings(progress, warnings, run.value.warnings);
  const error = runFailure(deps, tool, callId, attempt, run, context, timeoutMs, claimed);
  if (error) progress.ranAndFailed = { tool: tool.name, error };
  const ranUntil = performance.now();
  const execMs = ranUntil - execStarted;
  const durationMs = Math.round(ranUntil - started);
  const ran = runResult(deps, turn.sessionId, tool, callId, attempt, run, error, durationMs, warnings);
  let result = ran.result;
  const spill = ran.spill;

  const failed = error !== undefined;
  // A cancelled attempt is no repeat of the call (its client, or its wave, gave up): no loop record.
  const cancelled = error?.kind === ErrorKind.CANCELLED;
  const loopResult = cancelled ? undefined : loopRecordOf(result.output, error, result.truncated ? text : undefined);
  const idempotency = claimed ? claimEnd(callKey, tool, owner, result, error, loopResult) : undefined;
  const memory = failed ? undefined : { entry: memoryEntry(tool.name, canonicalArgs, text, tool.spec.skipRedaction), max: deps.limits.maxMemoryEntries, ttlSeconds: MEMORY_TTL_SECONDS };
  // A retry failing as the call's last attempt did is the same call failing once more, not the
  // model repeating it: counted once, so one call does not warn, nor block the next (windowRecord
  // still records the wait it told). A call-again-later failure counts only when `early`.
  const repeated = sameFailure(progress, op, loopResult, failed);
  const early = cameEarly(streak, ownRetry, toldBefore);
  const record = windowRecord({ result: loopResult, failure: error, repeated, early, probe: blockLeft === 0, toldRun: streak.toldRun, toldCap: tool.loop.stop, assumedWaitMs: tool.loop.assumedWaitMs, window: deps.limits.loopWindow });
  toldInTurn(turn, op, record);
  let spillKept = false;
  if (!storeDown) {
    try {
      let after = deps.store.finishAttempt({ scope, op, record, idempotency, spill, memory, unusedProbe: probeTaken && !record ? owner : undefined });
      if (after instanceof Promise) after = await after;
      spillKept = after.spillRefused !== true;
      const late = lateWork(run, context, idempotency, after);
      if (late) recordLateAnswer(deps, turn.sessionId, tool, callId, attempt, { scope, op, key: callKey, owner, cutBy: run.kind === 'cancelled' ? 'cancel' : 'timeout', answered: context?.lateAnswered }, late, execStarted);
      // Its next identical call refused for longer than the tool asked to wait: the result says so.
      const blockedMs = error ? blockedWaitMs(after.streak, tool, toldWaitMs(error, tool.loop.assumedWaitMs)) : undefined;
      if (record && record.counts !== false && noteLoopWarning(progress, failed, addLoopWarning(after.streak, tool, obs, attempt, warnings, blockedMs))) result.warnings = [...warnings];
      if (blockedMs !== undefined) result = errorResult(callId, tool.name, withWait(error!, blockedMs), attempt, durationMs, warnings, tool.maxResultChars);
    } catch (storeError) {
      storeWarn(deps.logger)('store write after attempt failed; memory and loop record dropped', { tool: tool.name, error: (storeError as Error).message });
    }
  }
  if (spill && !spillKept) fullTextNotKept(result, spill.text);
  if (cancelled) {
    deps.guards.breaker.record(breaker, ticket, { ok: false, counts: false, durationMs: execMs });
    throw HardError.cancelled();
  }
  let outcome = withPostNotes(deps, turn, tool, args, attempt, finished(attemptObs, result, error, execMs, context?.answered));
  if (outcome instanceof Promise) outcome = await outcome;
  // A success counts (it closes a half-open breaker); a cache hit and a failure that says nothing
  // about the tool's health (4xx, invalid arguments) do not.
  const counts = !cached && (!failed || countsForBreaker(error!));
  deps.guards.breaker.record(breaker, ticket, { ok: !failed, counts, noHost: error?.noHost, durationMs: execMs });
  return outcome;
}
