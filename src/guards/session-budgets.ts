import { evictOldest, TRIM_TO } from '../store/evict-oldest';
import type { SessionBudgets, SlotTool } from '../pipeline';
import { localSessionKey, type SessionBudget, type SessionScope } from '../store';
import { firstMatching } from './glob';
import type { BudgetPolicy } from './policy-types';

/** Sessions whose budget counts one replica keeps for a store outage; past it the oldest go. */
const MAX_KEPT_COUNTS = 10_000;

/**
 * Session budgets from the `budget:` policies: the budget a tool's calls count against (the first
 * matching policy, named in the session by its `match` globs, so reordering the policies keeps the
 * counts), and what holds while the store is unreachable. The store counts calls; while it cannot
 * be reached, read-only calls run without it, and this replica goes on counting a session's calls
 * itself from the last count the store gave it (from zero for a session it has not seen), so a
 * budget still bounds a session on each replica. Calls counted here are not added to the store's
 * count when it returns. Undefined when there are no budgets.
 */
export function createSessionBudgets(policies: readonly BudgetPolicy[]): SessionBudgets | undefined {
  if (policies.length === 0) return undefined;
  const policyOf = firstMatching(policies);
  const budgets = new Map(policies.map((p) => [p, { id: p.match.join(','), max: p.maxCalls }]));
  /** Calls counted per session and budget, as the store last said or as counted here since. */
  const used = new Map<string, number>();
  const keyOf = (scope: SessionScope, budget: SessionBudget) => `${localSessionKey(scope)}\u0000${budget.id}`;

  function keep(key: string, count: number): void {
    used.delete(key);
    used.set(key, count);
    if (used.size > MAX_KEPT_COUNTS) evictOldest(used, () => used.size > MAX_KEPT_COUNTS * TRIM_TO);
  }

  return {
    of(tool: SlotTool) {
      const policy = policyOf(tool.name);
      return policy && budgets.get(policy);
    },
    counted(scope, budget, left) {
      keep(keyOf(scope, budget), budget.max - left);
    },
    countHere(scope, budget) {
      const key = keyOf(scope, budget);
      const count = used.get(key) ?? 0;
      if (count >= budget.max) return -1;
      keep(key, count + 1);
      return budget.max - count - 1;
    },
    givenBack(scope, budget) {
      const key = keyOf(scope, budget);
      const count = used.get(key);
      if (count !== undefined && count > 0) used.set(key, count - 1);
    },
  };
}
