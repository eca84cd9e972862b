import { randomUUID } from 'node:crypto';
import { StoreUnavailableError, type Store } from '../../src/store';
import { countCall, fresh, OP, sleep, stored } from './contract-fixtures';
import type { StoreFactory } from './store-contract';

/**
 * The Store contract on how long state lives (DESIGN sections 5 and 6): idempotency records last
 * their lease or TTL, and a session's budget counts and loop window their TTL after its last count
 * or record, whatever other sessions do. Called inside describeStoreContract.
 */
export function describeLifetimes(factory: StoreFactory): void {
  let fewSessions: Store;
  // Each test its own store: the memory store refuses new sessions once 100 live ones fill it.
  beforeEach(async () => {
    fewSessions = await factory({ maxSessions: 100 });
  });
  afterEach(async () => {
    await fewSessions?.close();
  });

  /**
   * Other sessions' traffic: a side-effecting call completed, then one counted against a budget,
   * in each of `sessions` new sessions; a session the store refuses (the memory store, full of live
   * sessions) is counted. Returns the refusals.
   */
  async function otherTraffic(on: Store, sessions: number): Promise<number> {
    const tenant = `busy-${randomUUID()}`;
    let refused = 0;
    for (let i = 0; i < sessions; i++) {
      const scope = { tenant, sessionId: `s${i}` };
      try {
        await on.beginAttempt({ scope, op: OP, claim: { key: 'k', leaseMs: 10_000, owner: 'o' } });
        await on.finishAttempt({ scope, op: OP, record: { result: 'sent', failed: false, window: 100 }, idempotency: { key: 'k', action: 'complete', result: stored('sent'), ttlSeconds: 60 } });
        await on.beginAttempt({ scope, op: OP, budget: { id: 'send_*', max: 5 } });
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) throw error;
        refused++;
      }
    }
    return refused;
  }

  // Found in review: the memory store evicted the least recently used sessions past its cap with
  // their budget counts and loop windows, so a model spreading its calls over other sessions
  // started its own budget and loop detection again from zero.
  test("a session's budget counts and loop streak hold whatever traffic other sessions bring", async () => {
    const scope = fresh();
    const mail = { id: 'send_*', max: 3 };
    const counted = () => countCall(fewSessions, scope, mail);
    expect(await counted()).toBe(2);
    expect(await counted()).toBe(1);
    for (let i = 0; i < 3; i++) await fewSessions.finishAttempt({ scope, op: OP, record: { result: 'same', failed: false, window: 100 } });
    await otherTraffic(fewSessions, 300);
    expect((await fewSessions.beginAttempt({ scope, op: OP })).streak).toEqual({ count: 3, failed: false });
    expect(await counted()).toBe(0);
    expect(await counted()).toBe('over');
  });

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
      const begin = () => countCall(brief, scope, mail);
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
