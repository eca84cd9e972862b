import type { BeginAttemptResult, Store } from '../../src/store';
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

  test("a retry's record within one call tells its newer wait but adds nothing to toldRun, in the window or leaving it", async () => {
    const scope = fresh();
    const record = (op: string, extra: { counts?: false; waitMs?: number; retry?: true }, window = 100) =>
      Promise.resolve(store.finishAttempt({ scope, op, record: { result: 'busy', failed: true, window, ...extra } })).then((r) => r.streak);
    expect((await record('a', { counts: false, waitMs: 1000 })).toldRun).toBe(1);
    const retried = await record('a', { counts: false, waitMs: 60_000, retry: true });
    expect([retried.toldRun, retried.count, retried.waitMs! > 59_000]).toEqual([1, 0, true]);
    expect((await record('a', { counts: false, waitMs: 60_000, retry: true })).toldRun).toBe(1);
    expect((await record('a', { counts: false, waitMs: 60_000 })).toldRun).toBe(2);
    expect((await store.beginAttempt({ scope, op: 'a' })).streak.toldRun).toBe(2);
    // A retry's record continues the run: a model's call after it adds to it.
    expect((await record('a', { counts: false, waitMs: 60_000, retry: true })).toldRun).toBe(2);
    expect((await record('a', { waitMs: 60_000 })).toldRun).toBe(3);
    // Leaving the window: a call and its retries, then one call; in a window of 3 the first call left.
    const scope2 = fresh();
    const in3 = (extra: { counts?: false; waitMs?: number; retry?: true }) =>
      Promise.resolve(store.finishAttempt({ scope: scope2, op: 'c', record: { result: 'busy', failed: true, window: 3, counts: false, waitMs: 60_000, ...extra } })).then((r) => r.streak.toldRun);
    expect(await in3({})).toBe(1);
    expect(await in3({ retry: true })).toBe(1);
    expect(await in3({ retry: true })).toBe(1);
    expect(await in3({})).toBe(1);
    expect(await in3({})).toBe(2);
  });

  test("after a block's cool-down its probe goes to one call: the others are told how long it is held and take nothing; a newer failure, or the lease's end, frees it", async () => {
    const scope = fresh();
    const block = { threshold: 3, cooldownMs: 100, leaseMs: 400 };
    const fail = () => Promise.resolve(store.finishAttempt({ scope, op: 'p', record: { result: 'e', failed: true, window: 100 } }));
    const begin = () => Promise.resolve(store.beginAttempt({ scope, op: 'p', block }));
    const probeOf = (r: BeginAttemptResult) => (r.probeClaimed ? 'claimed' : r.probeHeldMs !== undefined ? 'held' : 'none');
    for (let i = 0; i < 3; i++) await fail();
    // Within the cool-down no probe is due (the streak's age refuses the call); nor below the threshold.
    expect(probeOf(await begin())).toBe('none');
    expect(probeOf(await store.beginAttempt({ scope, op: 'p', block: { ...block, threshold: 4 } }))).toBe('none');
    await sleep(150);
    const many = await Promise.all(Array.from({ length: 6 }, begin));
    expect(many.map(probeOf).sort()).toEqual(['claimed', 'held', 'held', 'held', 'held', 'held']);
    for (const r of many.filter((m) => m.probeHeldMs !== undefined)) {
      expect(r.probeHeldMs).toBeGreaterThan(0);
      expect(r.probeHeldMs).toBeLessThanOrEqual(400);
    }
    // Refused for the held probe: no idempotency claim taken, no budget counted.
    const budget = { id: 'b', max: 5 };
    const held = await store.beginAttempt({ scope, op: 'p', block, claim: { key: 'k', leaseMs: 5000, owner: 'o' }, budget });
    expect([probeOf(held), held.claim, held.budgetLeft]).toEqual(['held', undefined, undefined]);
    expect(await store.findRecord(scope, 'k')).toBeUndefined();
    // Without a block (the probe's own retry): nothing held.
    expect(probeOf(await store.beginAttempt({ scope, op: 'p' }))).toBe('none');
    // The probe failed again (a newer failure): the next cool-down's probe is free, the lease not over.
    await fail();
    expect(probeOf(await begin())).toBe('none');
    await sleep(150);
    expect(probeOf(await begin())).toBe('claimed');
    // A probe that never reports is held until its lease ends; then the next call takes it, claim and budget too.
    expect(probeOf(await begin())).toBe('held');
    await sleep(450);
    const next = await store.beginAttempt({ scope, op: 'p', block, claim: { key: 'k', leaseMs: 5000, owner: 'o' }, budget });
    expect([probeOf(next), next.claim?.state, next.budgetLeft]).toEqual(['claimed', 'claimed', 4]);
    expect(probeOf(await begin())).toBe('held');
  });

  test('a probe its call did not use (refused after the first step, cancelled) is given back by its holder alone, with or without the claim it took: the next call takes it', async () => {
    const scope = fresh();
    const block = (holder: string) => ({ threshold: 3, cooldownMs: 100, leaseMs: 60_000, holder });
    const begin = (holder: string, claim?: string) => Promise.resolve(store.beginAttempt({ scope, op: 'q', block: block(holder), claim: claim === undefined ? undefined : { key: claim, leaseMs: 60_000, owner: holder } }));
    const probeOf = (r: BeginAttemptResult) => (r.probeClaimed ? 'claimed' : r.probeHeldMs !== undefined ? 'held' : 'none');
    const giveBack = (holder: string, claim?: string) => store.finishAttempt({ scope, op: 'q', unusedProbe: holder, idempotency: claim === undefined ? undefined : { key: claim, action: 'release', owner: holder } });
    for (let i = 0; i < 3; i++) await store.finishAttempt({ scope, op: 'q', record: { result: 'e', failed: true, window: 100 } });
    await sleep(150);
    // A read-only call took it (its breaker then refused it): another holder's give-back frees nothing.
    expect(probeOf(await begin('h1'))).toBe('claimed');
    await giveBack('h0');
    await giveBack('');
    expect(probeOf(await begin('h2'))).toBe('held');
    // Its own does: the next call takes it at once, not after the 60 s lease.
    await giveBack('h1');
    expect(probeOf(await begin('h3'))).toBe('claimed');
    // A late give-back of h1's (the probe is h3's now) frees nothing.
    await giveBack('h1');
    expect(probeOf(await begin('h4'))).toBe('held');
    // A side-effecting call's probe goes back with its claim, in the same step.
    await giveBack('h3');
    const claimed = await begin('h5', 'k');
    expect([probeOf(claimed), claimed.claim?.state]).toEqual(['claimed', 'claimed']);
    await giveBack('h5', 'k');
    expect(await store.findRecord(scope, 'k')).toBeUndefined();
    const next = await begin('h6', 'k');
    expect([probeOf(next), next.claim?.state]).toEqual(['claimed', 'claimed']);
  });
}
