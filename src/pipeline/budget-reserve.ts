import type { ResolvedTool } from '../registry';
import { StoreUnavailableError } from '../store';
import { budgetToCount, type BudgetProgress } from './budget-count';
import { loopOp } from './loop-op';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import { budgetWarning, overBudget } from './refusals';

const LEASE_MARGIN_MS = 5_000;

/**
 * Counts a call against its session budget before an approver is asked about it (docs/policies.md,
 * "Session budgets"): a call the budget refuses throws its BLOCKED refusal unasked, and one asked
 * about holds its count while it waits, so a sibling of its turn (a parallel wave) cannot spend it
 * meanwhile and the approved call is never then refused by the budget. Marks the budget counted in
 * `progress`, so the attempt's store step does not count it again. A store that cannot answer
 * counts nothing here: the store step counts the call as before (or fails closed).
 */
export async function countBeforeAsking(deps: PipelineDeps, turn: TurnContext, tool: ResolvedTool, args: unknown, progress: BudgetProgress, warnings: string[]): Promise<void> {
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
  if (begun.budgetLeft === undefined) return;
  (progress.budgetsCounted ??= new Set()).add(budget.id);
  budgets!.counted(scope, budget, begun.budgetLeft);
  budgetWarning(tool, budget, begun.budgetLeft, warnings);
}
