import { randomUUID } from 'node:crypto';
import type { SessionBudget, SessionScope, Store, StoredResult } from '../../src/store';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const fresh = (tenant = `t-${randomUUID()}`): SessionScope => ({ tenant, sessionId: `s-${randomUUID()}` });
export const OP = 'send_email\u0000{"to":"a@example.com"}';

export const stored = (output: string): StoredResult => ({
  output,
  isError: false,
  resolvedToolName: 'send_email',
  truncated: false,
  resultHandle: '',
  durationMs: 12,
});

/** Counts a call of `scope` against `budget`: the calls left after it, or 'over' when refused. */
export async function countCall(store: Store, scope: SessionScope, budget: SessionBudget, op = OP): Promise<number | 'over' | undefined> {
  const begun = await store.beginAttempt({ scope, op, budget });
  return begun.overBudget ? 'over' : begun.budgetLeft;
}
