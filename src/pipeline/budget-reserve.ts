import type { ResolvedTool } from '../registry';
import { StoreUnavailableError, type LoopStreak, type SessionScope } from '../store';
import { budgetToCount, type BudgetProgress, type CountedBudget } from './budget-count';
import { blockLeftMs, blockRefusal, loopBlockOf, loopStop } from './loop-block';
import { loopOp } from './loop-op';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import type { GiveBack } from './pre-attempt';
import { budgetWarning, overBudget } from './refusals';
import { callBreakerKey } from './breaker-key';
import { breakerOpen } from './breaker-refusal';
import { storeWarn } from './store-warn';

const LEASE_MARGIN_MS = 5_000;

/** What countBeforeAsking reads of a call's progress: its budget's, and its last failure's op (a retry of its own is not blocked). */
export type AskingProgress = BudgetProgress & { readonly lastFailure?: { readonly op: string } };

/**
 * Counts a call against its session budget before an approver is asked about it (docs/policies.md,
 * "Session budgets"): a call the budget refuses throws its BLOCKED refusal unasked, and one asked
 * about holds its count while it waits, so a sibling of its turn (a parallel wave) cannot spend it
 * meanwhile and the approved call is never then refused by the budget. Marks the budget counted in
 * `progress`, so the attempt's store step does not count it again. A store that cannot answer
 * counts nothing here that is known: the store step counts the call as before (or fails closed).
 * Gives what gives the count back when the approval is not granted (see giveBack): when it counted
 * one, and when its step got no answer (Redis may have counted it all the same, a step answered
 * late; the give-back acts only on the call's own mark, so it gives back nothing of a step that
 * never ran).
 * A call its tool's loop block refuses is refused here too (LOOP_BLOCKED), unasked, as the store
 * step would refuse it after the approval (see refuseBlocked): with no budget to count, the step
 * reads the block alone (one store round trip per call put to an approver). So is one whose loop
 * pre-check stops it (ABORTED LOOP_DETECTED, `stopped` told first, as LOOP_STOP): before, its
 * approver was asked, answered resolved=true, and the turn then aborted with nothing run.
 */
export async function countBeforeAsking(deps: PipelineDeps, turn: TurnContext, tool: ResolvedTool, args: unknown, attempt: number, progress: AskingProgress, warnings: string[], stopped?: (message: string) => void): Promise<GiveBack | undefined> {
  const budgets = deps.guards.budgets;
  // Its token outlives the wait, so that a step answered late is not counted again by the store step's.
  const budget = budgetToCount(budgets?.of(tool), progress, deps.limits.approvalTimeoutMs + tool.timeoutMs + tool.retry.maxBackoffMs + LEASE_MARGIN_MS);
  const op = loopOp(tool, args);
  // As the store step passes it: a retry of the call's own failure is not blocked.
  const ownRetry = progress.lastFailure?.op === op;
  if (budget === undefined && ownRetry) return;
  const scope = turn.scope ?? { tenant: turn.tenant, sessionId: turn.sessionId };
  let begun;
  try {
    // No claim (nothing runs yet). The block, peeked at only, so that a call refused for the probe
    // another call holds is refused here and counted nowhere, as the store step refuses it; the
    // probe is taken by the run's own store step (taken here, it would be held through the wait,
    // refusing every other call of the op as "running" while none ran).
    begun = await deps.store.beginAttempt({ scope, op, budget, block: ownRetry ? undefined : { ...loopBlockOf(tool, 0, ''), peek: true } });
  } catch (error) {
    // The store step after the approval reads the block, or fails closed.
    if (error instanceof StoreUnavailableError) return budget && kept(progress, attempt, () => giveBack(deps, tool, scope, budget, progress, warnings, undefined, false));
    throw error;
  }
  // The store step's pre-check, as it would stop the call after the approval (counted, as it counts it).
  const stop = loopStop(tool, begun.streak);
  if (stop) {
    stopped?.(stop.message);
    throw stop;
  }
  if (budget === undefined) {
    refuseBlocked(tool, begun.streak, begun.probeHeldMs);
    return undefined;
  }
  if (begun.overBudget) throw overBudget(tool, budget);
  const left = begun.budgetLeft;
  const warned = warnings.length;
  if (left !== undefined) {
    (progress.budgetsCounted ??= new Set()).add(budget.id);
    budgets!.counted(scope, budget, left);
    budgetWarning(tool, budget, left, warnings);
  }
  // After the count's bookkeeping, as in the store step: a call refused counted stays counted once.
  if (!ownRetry) refuseBlocked(tool, begun.streak, begun.probeHeldMs);
  if (left === undefined) return undefined;
  const warning = warnings.length > warned ? warnings[warned] : undefined;
  return kept(progress, attempt, () => giveBack(deps, tool, scope, budget, progress, warnings, warning));
}

/**
 * What is read before an approver is asked (countBeforeAsking), then the tool's breaker gate (DESIGN
 * section 3, step 4, after the loop pre-check, so LOOP_BLOCKED still wins): a call its breaker
 * refuses now (open, or half-open with its probe out) is refused BREAKER_OPEN unasked, with when it
 * may let a call through (retry_after_ms). Before, the approver was asked, approved, and the call
 * was then refused at the gate without running. One whose breaker would half-open during the wait
 * is refused all the same: an approver answering within the open time would have approved a call
 * refused, and the model is told when to call again (asked again then); a breaker that opens during
 * the wait still refuses the approved call at the gate. A read-only call stays counted against its
 * session budget, as the store step counts a call its breaker refuses; a side-effecting one gives
 * its count back, as one let through for its record only is refused uncounted (run-attempt).
 */
export async function readyToAsk(deps: PipelineDeps, turn: TurnContext, tool: ResolvedTool, args: unknown, attempt: number, progress: AskingProgress, warnings: string[], stopped?: (message: string) => void): Promise<GiveBack | undefined> {
  const giveBack = await countBeforeAsking(deps, turn, tool, args, attempt, progress, warnings, stopped);
  if (!deps.guards.breaker.isOpen(callBreakerKey(turn.tenant, tool))) return giveBack;
  if (!tool.readOnly && giveBack) await giveBack();
  else if (progress.countedBeforeAsking?.attempt === attempt) progress.countedBeforeAsking = undefined;
  throw breakerOpen(deps, turn, tool);
}

/**
 * Gives back what `attempt` counted before asking its approver, when the attempt is refused before
 * its store step (its concurrency cap full, its rate's turn too far): a call refused so does not
 * count (docs/policies.md, "Session budgets"), approved or not. A later attempt counts again.
 */
export async function giveBackAsked(progress: BudgetProgress, attempt: number): Promise<void> {
  const asked = progress.countedBeforeAsking;
  if (asked?.attempt !== attempt) return;
  progress.countedBeforeAsking = undefined;
  await asked.giveBack();
}

/**
 * `attempt`'s promise, giving back what it counted before asking its approver should it end by a
 * hard error before its store step took the count over: the client cancelled, a sibling's hard
 * error aborted the wave, or dispatchd began to drain, while it waited for its slot or rate turn
 * (or for its step). The call never ran: its session keeps the count. Rejects as `attempt` did.
 */
export function givingBackOnAbort<T>(attempt: Promise<T>, progress: BudgetProgress, n: number): Promise<T> {
  return attempt.catch(async (error: unknown) => {
    await giveBackAsked(progress, n);
    throw error;
  });
}

/** `giveBack`, kept in `progress` for `attempt`'s store step too (BudgetProgress.countedBeforeAsking). */
function kept(progress: BudgetProgress, attempt: number, giveBack: GiveBack): GiveBack {
  progress.countedBeforeAsking = { attempt, giveBack };
  return giveBack;
}

/**
 * Throws the LOOP_BLOCKED refusal of a call its tool's block refuses now, as the store step after
 * the approval would (run-attempt): another call holds the block's probe (`probeHeldMs`: the store
 * counted nothing), or the block's cool-down is not over. The latter was counted all the same, as
 * the store step counts a call it refuses so (docs/policies.md, "Session budgets"); either way no
 * approver is asked about a call that would not run.
 */
function refuseBlocked(tool: ResolvedTool, streak: LoopStreak, probeHeldMs: number | undefined): void {
  const left = blockLeftMs(streak, tool);
  const refusal = left === undefined ? undefined : blockRefusal(streak, left, probeHeldMs);
  if (refusal) throw refusal;
}

/**
 * Gives a call's count back when its approval was not granted (denied, expired, cut short, its
 * session ended, no room to wait): a call nobody let run does not spend its session's budget. The
 * store gives back this call's count once and only while it lives (Store.giveBackBudget); the
 * budget's warning it got goes too, and a later attempt of it would be counted again. A store that
 * fails here leaves the count spent (logged), as before there was this step; this never rejects.
 */
async function giveBack(deps: PipelineDeps, tool: ResolvedTool, scope: SessionScope, budget: CountedBudget, progress: BudgetProgress, warnings: string[], warning: string | undefined, heard = true): Promise<void> {
  progress.countedBeforeAsking = undefined;
  try {
    // The count this replica keeps for a store outage (SessionBudgets.counted) follows the store's,
    // when it heard of the count (a step answered late told it nothing).
    if ((await deps.store.giveBackBudget(scope, budget.id, budget.token)) && heard) deps.guards.budgets?.givenBack(scope, budget);
  } catch (error) {
    const what = heard ? 'the budget count of a call not approved; it stays counted' : 'a budget count a call not approved may have taken (its step got no answer); if taken, it stays counted';
    storeWarn(deps.logger)(`store unavailable to give back ${what}`, { tool: tool.name, budget: budget.id, error: (error as Error).message });
    return;
  }
  progress.budgetsCounted?.delete(budget.id);
  const at = warning === undefined ? -1 : warnings.indexOf(warning);
  if (at !== -1) warnings.splice(at, 1);
}
