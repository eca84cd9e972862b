import type { ResolvedTool } from '../registry';
import { StoreUnavailableError, type SessionScope } from '../store';
import { budgetToCount, type BudgetProgress, type CountedBudget } from './budget-count';
import { loopOp } from './loop-op';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import type { GiveBack } from './pre-attempt';
import { budgetWarning, overBudget } from './refusals';

const LEASE_MARGIN_MS = 5_000;

/**
 * Counts a call against its session budget before an approver is asked about it (docs/policies.md,
 * "Session budgets"): a call the budget refuses throws its BLOCKED refusal unasked, and one asked
 * about holds its count while it waits, so a sibling of its turn (a parallel wave) cannot spend it
 * meanwhile and the approved call is never then refused by the budget. Marks the budget counted in
 * `progress`, so the attempt's store step does not count it again. A store that cannot answer
 * counts nothing here: the store step counts the call as before (or fails closed). Gives what
 * gives the count back when the approval is not granted (see giveBack), when it counted one.
 */
export async function countBeforeAsking(deps: PipelineDeps, turn: TurnContext, tool: ResolvedTool, args: unknown, progress: BudgetProgress, warnings: string[]): Promise<GiveBack | undefined> {
  const budgets = deps.guards.budgets;
  // Its token outlives the wait, so that a step answered late is not counted again by the store step's.
  const budget = budgetToCount(budgets?.of(tool), progress, deps.limits.approvalTimeoutMs + tool.timeoutMs + tool.retry.maxBackoffMs + LEASE_MARGIN_MS);
  if (budget === undefined) return;
  const scope = turn.scope ?? { tenant: turn.tenant, sessionId: turn.sessionId };
  let begun;
  try {
    // A budget alone: no claim (nothing runs yet) and no loop-block probe; the streak read is moot.
    begun = await deps.store.beginAttempt({ scope, op: loopOp(tool, args), budget });
  } catch (error) {
    if (error instanceof StoreUnavailableError) return;
    throw error;
  }
  if (begun.overBudget) throw overBudget(tool, budget);
  if (begun.budgetLeft === undefined) return undefined;
  (progress.budgetsCounted ??= new Set()).add(budget.id);
  budgets!.counted(scope, budget, begun.budgetLeft);
  const warned = warnings.length;
  budgetWarning(tool, budget, begun.budgetLeft, warnings);
  const warning = warnings.length > warned ? warnings[warned] : undefined;
  return () => giveBack(deps, tool, scope, budget, progress, warnings, warning);
}

/**
 * Gives a call's count back when its approval was not granted (denied, expired, cut short, its
 * session ended, no room to wait): a call nobody let run does not spend its session's budget. The
 * store gives back this call's count once and only while it lives (Store.giveBackBudget); the
 * budget's warning it got goes too, and a later attempt of it would be counted again. A store that
 * fails here leaves the count spent (logged), as before there was this step; this never rejects.
 */
async function giveBack(deps: PipelineDeps, tool: ResolvedTool, scope: SessionScope, budget: CountedBudget, progress: BudgetProgress, warnings: string[], warning: string | undefined): Promise<void> {
  try {
    await deps.store.giveBackBudget(scope, budget.id, budget.token);
  } catch (error) {
    deps.logger.warn('store unavailable to give back the budget count of a call not approved; it stays counted', { tool: tool.name, budget: budget.id, error: (error as Error).message });
    return;
  }
  progress.budgetsCounted?.delete(budget.id);
  const at = warning === undefined ? -1 : warnings.indexOf(warning);
  if (at !== -1) warnings.splice(at, 1);
}
