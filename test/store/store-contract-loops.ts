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
    expect(told).toEqual({ count: 1, failed: true, sinceMs: expect.any(Number), waitMs: expect.any(Number), toldRun: 1 });
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
    expect(await record('busy', true, { waitMs: 100 })).toEqual({ count: 1, failed: true, sinceMs: expect.any(Number), waitMs: expect.any(Number), toldRun: 1 });
    await sleep(150);
    expect(await begin()).toEqual({ count: 1, failed: true, sinceMs: expect.any(Number), toldRun: 1 });
    // Only uncounted records of an op: no streak at all.
    const other = fresh();
    await store.finishAttempt({ scope: other, op: 'b', record: { result: 'busy', failed: true, window: 100, counts: false, waitMs: 60_000 } });
    expect((await store.beginAttempt({ scope: other, op: 'b' })).streak).toEqual({ count: 0, failed: false, waitMs: expect.any(Number), toldRun: 1 });
    expect(await record('ok', false)).toEqual({ count: 1, failed: false });
  });

  test("toldRun: the op's newest records in a row that told a wait with the newest one's result, counted or not; one that told none ends it, as does the window", async () => {
    const scope = fresh();
    const record = (op: string, result: string, extra: { counts?: false; waitMs?: number } = {}, window = 100) =>
      Promise.resolve(store.finishAttempt({ scope, op, record: { result, failed: true, window, ...extra } })).then((r) => r.streak.toldRun);
    expect(await record('a', 'busy', { counts: false, waitMs: 60_000 })).toBe(1);
    expect(await record('a', 'busy', { waitMs: 60_000 })).toBe(2);
    // Another op's records neither add to it nor end it.
    expect(await record('b', 'busy', { waitMs: 60_000 })).toBe(1);
    expect(await record('a', 'busy', { counts: false, waitMs: 60_000 })).toBe(3);
    expect((await store.beginAttempt({ scope, op: 'a' })).streak.toldRun).toBe(3);
    // Another answer to call again later starts another run; a failure that told no wait ends it.
    expect(await record('a', 'down', { counts: false, waitMs: 1000 })).toBe(1);
    expect(await record('a', 'bad')).toBeUndefined();
    expect(await record('a', 'busy', { counts: false, waitMs: 60_000 })).toBe(1);
    // Records leaving the window leave the run: 4 of a's in a window of 4 ('b' left it).
    for (let i = 0; i < 3; i++) await record('a', 'busy', { counts: false, waitMs: 60_000 }, 4);
    expect(await record('a', 'busy', { counts: false, waitMs: 60_000 }, 4)).toBe(4);
    expect(await record('a', 'busy', { waitMs: 60_000 }, 4)).toBe(4);
  });
}
