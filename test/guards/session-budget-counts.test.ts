import { status } from '@grpc/grpc-js';
import { createSessionBudgets } from '../../src/guards/session-budgets';
import { defaultGuards, retryTreeReflector, type Guards } from '../../src/pipeline';
import { startApp } from '../helpers/servers';
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

test('a count given back leaves the session one call more here, never below none counted', () => {
  const sendBudget = budgets.of(tool('send_fax'))!;
  budgets.counted(scope('given'), sendBudget, 0);
  budgets.givenBack(scope('given'), sendBudget);
  expect(budgets.countHere(scope('given'), sendBudget)).toBe(0);
  expect(budgets.countHere(scope('given'), sendBudget)).toBe(-1);
  // A session this replica never counted has nothing to give back: its count starts at none.
  budgets.givenBack(scope('never'), sendBudget);
  expect(budgets.countHere(scope('never'), sendBudget)).toBe(2);
  budgets.counted(scope('empty'), sendBudget, 3);
  budgets.givenBack(scope('empty'), sendBudget);
  expect(budgets.countHere(scope('empty'), sendBudget)).toBe(2);
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

test('a call cancelled while a slow pre-tool hook ran (one that ignores the signal) is not counted', async () => {
  const guards: Guards = {
    ...defaultGuards(retryTreeReflector),
    preHook: () => new Promise((resolve) => setTimeout(() => resolve({ action: 'allow' }), 200)),
    budgets: createSessionBudgets([policy(['echo'], 1)]),
  };
  const d = await startApp(`tools:\n  - { name: echo, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }\n`, { pipeline: { guards } });
  try {
    const controller = new AbortController();
    const cancelled = d.dispatch.dispatch({ sessionId: 'hooked', calls: [{ id: 'a', name: 'echo', arguments: '{"n":1}' }] }, { signal: controller.signal }).catch((error: unknown) => error);
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    expect(await cancelled).toMatchObject({ code: status.CANCELLED });
    // Past the hook: the cancelled call took no store step, so the budget of 1 is whole.
    await new Promise((r) => setTimeout(r, 300));
    const next = await d.dispatch.dispatch({ sessionId: 'hooked', calls: [{ id: 'b', name: 'echo', arguments: '{"n":2}' }] });
    expect(next.results[0]!.isError).toBe(false);
  } finally {
    await d.close();
  }
});
