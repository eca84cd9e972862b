import type { Store } from '../../src/store';
import { fresh, sleep } from './contract-fixtures';
import type { StoreFactory } from './store-contract';

/**
 * The Store contract on the loop window over time (DESIGN section 6): a failed streak's age and the
 * wait the op's newest record told, by the store's clock, and records that do not count. Called
 * inside describeStoreContract.
 */
export function describeLoopTimes(factory: StoreFactory): void {
  let store: Store;
  beforeAll(async () => {
    store = await factory({});
  });
  afterAll(async () => {
    await store?.close();
  });

  test("a failed streak tells its age, the op's newest record the wait it told; a record that does not count neither adds to its streak nor breaks it", async () => {
    const scope = fresh();
    type Extra = { counts?: false; waitMs?: number };
    const record = (result: string, failed: boolean, extra: Extra = {}) => Promise.resolve(store.finishAttempt({ scope, op: 'a', record: { result, failed, window: 100, ...extra } })).then((r) => r.streak);
    const begin = async () => (await store.beginAttempt({ scope, op: 'a' })).streak;
    const first = await record('e1', true);
    expect(first).toEqual({ count: 1, failed: true, sinceMs: expect.any(Number) });
    expect(first.sinceMs).toBeLessThan(500);
    // Uncounted, with a wait told: the streak stays, and the wait is given until it has passed.
    const told = await record('busy', true, { counts: false, waitMs: 60_000 });
    expect(told).toEqual({ count: 1, failed: true, sinceMs: expect.any(Number), waitMs: expect.any(Number) });
    expect(told.waitMs).toBeGreaterThan(59_000);
    await sleep(120);
    const later = await begin();
    expect(later.sinceMs).toBeGreaterThanOrEqual(100);
    expect(later.waitMs).toBeLessThanOrEqual(60_000 - 100);
    expect(later.waitMs).toBeGreaterThan(50_000);
    // Counted again: the uncounted record did not break the run of e1; its newest record told no wait.
    const again = await record('e1', true);
    expect(again).toEqual({ count: 2, failed: true, sinceMs: expect.any(Number) });
    expect(again.sinceMs).toBeLessThan(100);
    // A counted record with a short wait: a new failure (progress), its wait gone once passed.
    expect(await record('busy', true, { waitMs: 100 })).toEqual({ count: 1, failed: true, sinceMs: expect.any(Number), waitMs: expect.any(Number) });
    await sleep(150);
    expect(await begin()).toEqual({ count: 1, failed: true, sinceMs: expect.any(Number) });
    // Only uncounted records of an op: no streak at all.
    const other = fresh();
    await store.finishAttempt({ scope: other, op: 'b', record: { result: 'busy', failed: true, window: 100, counts: false, waitMs: 60_000 } });
    expect((await store.beginAttempt({ scope: other, op: 'b' })).streak).toEqual({ count: 0, failed: false, waitMs: expect.any(Number) });
    expect(await record('ok', false)).toEqual({ count: 1, failed: false });
  });
}
