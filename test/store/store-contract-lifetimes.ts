import { randomUUID } from 'node:crypto';
import type { Store } from '../../src/store';
import { fresh, OP, sleep, stored } from './contract-fixtures';
import type { StoreFactory } from './store-contract';

/**
 * The Store contract on how long state lives (DESIGN sections 5 and 6): idempotency records last
 * their lease or TTL whatever other sessions do, and session budgets their TTL after the last count.
 * Called inside describeStoreContract.
 */
export function describeLifetimes(factory: StoreFactory): void {
  let fewSessions: Store;
  beforeAll(async () => {
    fewSessions = await factory({ maxSessions: 100 });
  });
  afterAll(async () => {
    await fewSessions?.close();
  });

  /** Another tenant's traffic: a side-effecting call completed in each of `sessions` new sessions. */
  async function otherTraffic(on: Store, sessions: number): Promise<void> {
    const tenant = `busy-${randomUUID()}`;
    for (let i = 0; i < sessions; i++) {
      const scope = { tenant, sessionId: `s${i}` };
      await on.beginAttempt({ scope, op: OP, claim: { key: 'k', leaseMs: 10_000, owner: 'o' } });
      await on.finishAttempt({ scope, op: OP, record: { result: 'sent', failed: false, window: 100 }, idempotency: { key: 'k', action: 'complete', result: stored('sent'), ttlSeconds: 60 } });
    }
  }

  // Found in review: the memory store evicted a session (its cap on sessions, shared by all
  // tenants) with its idempotency records, so other sessions' traffic alone let an identical call
  // run a side effect a second time while the first still ran.
  test("a claim in progress outlives any traffic of other sessions: an identical call is still IN_PROGRESS", async () => {
    const scope = fresh();
    const begin = async (owner: string) => (await fewSessions.beginAttempt({ scope, op: OP, claim: { key: 'running', leaseMs: 60_000, owner } })).claim;
    expect(await begin('first')).toEqual({ state: 'claimed' });
    await otherTraffic(fewSessions, 300);
    expect(await begin('second')).toEqual({ state: 'in_progress' });
    await fewSessions.finishAttempt({ scope, op: OP, idempotency: { key: 'running', action: 'complete', result: stored('sent once'), ttlSeconds: 60 } });
    expect(await begin('third')).toEqual({ state: 'completed', result: stored('sent once') });
  });

  test('finished records (completed, unknown) replay within their TTL whatever traffic other sessions bring', async () => {
    const scope = fresh();
    const begin = async (key: string) => (await fewSessions.beginAttempt({ scope, op: OP, claim: { key, leaseMs: 10_000, owner: key } })).claim;
    expect(await begin('done')).toEqual({ state: 'claimed' });
    await fewSessions.finishAttempt({ scope, op: OP, idempotency: { key: 'done', action: 'complete', result: stored('done'), ttlSeconds: 3600 } });
    expect(await begin('unknown')).toEqual({ state: 'claimed' });
    await fewSessions.finishAttempt({ scope, op: OP, idempotency: { key: 'unknown', action: 'unknown', ttlSeconds: 3600 } });
    await otherTraffic(fewSessions, 300);
    expect(await begin('done')).toEqual({ state: 'completed', result: stored('done') });
    expect(await begin('unknown')).toEqual({ state: 'unknown' });
  });

  // Found in review: on Redis a session's budget counts expire a TTL after its last counted call
  // (the loop window's); the memory store kept them for the session's life.
  test("a session budget starts again once its TTL has passed since its last counted call; a refusal does not extend it", async () => {
    const brief = await factory({ budgetTtlSeconds: 2 });
    try {
      const scope = fresh();
      const mail = { id: 'send_*', max: 2 };
      const begin = async () => {
        const begun = await brief.beginAttempt({ scope, op: OP, budget: mail });
        return begun.overBudget ? 'over' : begun.budgetLeft;
      };
      expect(await begin()).toBe(1);
      await sleep(1100);
      expect(await begin()).toBe(0);
      expect(await begin()).toBe('over');
      // Past the first count's TTL, not the last's.
      await sleep(1000);
      expect(await begin()).toBe('over');
      await sleep(1100);
      expect(await begin()).toBe(1);
    } finally {
      await brief.close();
    }
  });
}
