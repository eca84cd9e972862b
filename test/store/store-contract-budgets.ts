import type { SessionBudget, SessionScope, Store } from '../../src/store';
import { fresh, OP, sleep } from './contract-fixtures';
import type { StoreFactory } from './store-contract';

/**
 * The Store contract on giving a budget count back (Store.giveBackBudget: a call counted before
 * its approval was asked, and not approved): once, only while the call's mark lives in the counts'
 * current life, never below zero. Called inside describeStoreContract.
 */
export function describeBudgetGiveBack(factory: StoreFactory): void {
  let store: Store;
  beforeAll(async () => {
    store = await factory({});
  });
  afterAll(async () => {
    await store?.close();
  });

  const mail: SessionBudget = { id: 'send_*', max: 3 };
  /** Counts a call with its token: the calls left after it, or 'over'. */
  async function count(on: Store, scope: SessionScope, token: string, tokenLeaseMs = 60_000): Promise<number | 'over' | undefined> {
    const begun = await on.beginAttempt({ scope, op: OP, budget: { ...mail, token, tokenLeaseMs } });
    return begun.overBudget ? 'over' : begun.budgetLeft;
  }

  test("a call's count is given back once: a second give-back, or one of a call never counted, gives nothing", async () => {
    const scope = fresh();
    expect(await count(store, scope, 'a')).toBe(2);
    expect(await count(store, scope, 'b')).toBe(1);
    expect(await store.giveBackBudget(scope, mail.id, 'a')).toBe(true);
    expect(await store.giveBackBudget(scope, mail.id, 'a')).toBe(false);
    expect(await store.giveBackBudget(scope, mail.id, 'never')).toBe(false);
    // Another budget, or another session, has no mark of the call.
    expect(await store.giveBackBudget(scope, 'search', 'b')).toBe(false);
    expect(await store.giveBackBudget(fresh(scope.tenant), mail.id, 'b')).toBe(false);
    // One call counted (b): two more fit, then the budget refuses.
    expect(await count(store, scope, 'c')).toBe(1);
    expect(await count(store, scope, 'd')).toBe(0);
    expect(await count(store, scope, 'e')).toBe('over');
    // Given back at the budget's end: the next call is counted again.
    expect(await store.giveBackBudget(scope, mail.id, 'd')).toBe(true);
    expect(await count(store, scope, 'f')).toBe(0);
  });

  test('concurrent give-backs of one call give back one count', async () => {
    const scope = fresh();
    await count(store, scope, 'a');
    await count(store, scope, 'b');
    const given = await Promise.all(Array.from({ length: 4 }, () => store.giveBackBudget(scope, mail.id, 'a')));
    expect(given.filter(Boolean)).toHaveLength(1);
    expect(await count(store, scope, 'c')).toBe(1);
  });

  test("nothing is given back after the session ended (its counts started again) or past the call's mark's life", async () => {
    const scope = fresh();
    expect(await count(store, scope, 'a')).toBe(2);
    await store.endSession(scope);
    expect(await count(store, scope, 'b')).toBe(2);
    // The ended session's call is not taken off the new count, nor is a session made for it.
    expect(await store.giveBackBudget(scope, mail.id, 'a')).toBe(false);
    expect(await store.giveBackBudget(fresh(), mail.id, 'a')).toBe(false);
    expect(await count(store, scope, 'c')).toBe(1);
    // A mark lives its call's lease.
    expect(await count(store, scope, 'brief', 100)).toBe(0);
    await sleep(200);
    expect(await store.giveBackBudget(scope, mail.id, 'brief')).toBe(false);
    expect(await count(store, scope, 'd')).toBe('over');
  });

  test('nothing is given back once the counts expired, also after they started again', async () => {
    const brief = await factory({ budgetTtlSeconds: 1 });
    try {
      const scope = fresh();
      expect(await count(brief, scope, 'a')).toBe(2);
      expect(await count(brief, scope, 'b')).toBe(1);
      await sleep(1200);
      expect(await count(brief, scope, 'c')).toBe(2);
      expect(await brief.giveBackBudget(scope, mail.id, 'a')).toBe(false);
      expect(await count(brief, scope, 'd')).toBe(1);
      await sleep(1200);
      // Expired with no count since: nothing to give back, and the count never goes below zero.
      expect(await brief.giveBackBudget(scope, mail.id, 'd')).toBe(false);
      expect(await count(brief, scope, 'e')).toBe(2);
    } finally {
      await brief.close();
    }
  });
}
