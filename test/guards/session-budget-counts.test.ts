import { createSessionBudgets } from '../../src/guards/session-budgets';
import type { BudgetPolicy } from '../../src/guards/policy-types';

// What one replica counts of a session's budget while the store is away: from the store's last
// count, bounded in the sessions it keeps.

const policy = (match: string[], maxCalls: number) => ({ match, maxCalls }) as BudgetPolicy;
const budgets = createSessionBudgets([policy(['send_*'], 3), policy(['search'], 2)])!;
const tool = (name: string) => ({ tenant: '', name, timeoutMs: 1000 });
const scope = (sessionId: string, tenant = '') => ({ tenant, sessionId });

test('no policies, no budgets; the first matching policy names the budget', () => {
  expect(createSessionBudgets([])).toBeUndefined();
  expect(budgets.of(tool('send_mail'))).toEqual({ id: 'send_*', max: 3 });
  expect(budgets.of(tool('other'))).toBeUndefined();
});

test('counting here goes on from what the store last said, per tenant, session and budget', () => {
  const sendBudget = budgets.of(tool('send_sms'))!;
  budgets.counted(scope('s'), sendBudget, 1);
  expect(budgets.countHere(scope('s'), sendBudget)).toBe(0);
  expect(budgets.countHere(scope('s'), sendBudget)).toBe(-1);
  expect(budgets.countHere(scope('s'), sendBudget)).toBe(-1);
  // The store's word replaces the count kept here.
  budgets.counted(scope('s'), sendBudget, 2);
  expect(budgets.countHere(scope('s'), sendBudget)).toBe(1);
  expect(budgets.countHere(scope('s', 'other-tenant'), sendBudget)).toBe(2);
  expect(budgets.countHere(scope('s'), budgets.of(tool('search'))!)).toBe(1);
});

test('sessions kept are bounded: the ones counted longest ago go first', () => {
  const search = budgets.of(tool('search'))!;
  budgets.countHere(scope('kept-0'), search);
  budgets.countHere(scope('kept-0'), search);
  for (let i = 1; i <= 10_000; i++) budgets.counted(scope(`kept-${i}`), search, 0);
  // kept-0 went (its count starts again); the last ones stay spent.
  expect(budgets.countHere(scope('kept-0'), search)).toBe(1);
  expect(budgets.countHere(scope('kept-10000'), search)).toBe(-1);
});
