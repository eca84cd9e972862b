/** What holds a session's budget marks (the memory store's session state). */
export interface BudgetMarksHolder {
  /** The marks of calls counted with a token (budget id, NUL, token -> when it goes), for giveBackBudget. */
  budgetMarks?: Map<string, number>;
}

/**
 * Marks a call counted (`budgetMarks`) until `until`, forgetting the marks gone at `t` first:
 * marks live alike, so the oldest go first (and a session holds no more than its budgets' calls).
 */
export function markCounted(holder: BudgetMarksHolder, key: string, until: number, t: number): void {
  const marks = (holder.budgetMarks ??= new Map<string, number>());
  for (const [old, at] of marks) {
    if (at > t) break;
    marks.delete(old);
  }
  marks.set(key, until);
}
