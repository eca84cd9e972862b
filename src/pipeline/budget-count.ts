import type { SessionBudget } from '../store';
import { newId } from './owner-ids';

/** A budget as an attempt's store step counts it: with its call's token (BeginAttempt.budget). */
export type CountedBudget = SessionBudget & { readonly token: string; readonly tokenLeaseMs?: number };

/** What budgetToCount keeps of a call across its attempts (part of CallProgress). */
export interface BudgetProgress {
  /**
   * The budgets (by id) the call was counted against by an earlier attempt: once each, so a retry
   * is not counted again, but a fallback tool under another budget is counted against it too.
   */
  budgetsCounted?: Set<string>;
  /** The call's token for its budgets, made at its first attempt under one (see budgetToCount). */
  budgetToken?: string;
  /**
   * Gives back the count taken before the approver of the call's `attempt` was asked
   * (countBeforeAsking), until that attempt's store step: approved while another call took the
   * op's probe, it is refused for it, counted nowhere, as a call refused so unasked is.
   */
  countedBeforeAsking?: { readonly attempt: number; readonly giveBack: () => Promise<void> };
}

/**
 * The budget an attempt counts against, with its call's token, or undefined when an earlier
 * attempt of the call was counted against it (its store step said so). An attempt whose step got
 * no answer may have been counted all the same (Redis ran it late): its retry sends the same
 * token, which the store counts once, so a slow Redis does not count a call twice. The store
 * remembers the token `leaseMs` from each step: the attempt's run and the wait before its retry.
 */
export function budgetToCount(budget: SessionBudget | undefined, progress: BudgetProgress, leaseMs?: number): CountedBudget | undefined {
  if (budget === undefined || progress.budgetsCounted?.has(budget.id)) return undefined;
  progress.budgetToken ??= newId(); // unique across replicas, as claim owners are
  return { id: budget.id, max: budget.max, token: progress.budgetToken, ...(leaseMs !== undefined ? { tokenLeaseMs: leaseMs } : {}) };
}
