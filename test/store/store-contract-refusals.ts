import type { BeginAttemptResult, FinishAttempt, Store } from '../../src/store';
import { fresh, sleep } from './contract-fixtures';
import type { StoreFactory } from './store-contract';

/**
 * The Store contract on refusals in the loop window (FinishAttempt.record.refused): recorded and
 * read in one finishAttempt, counted as failures of their op, but with no age, so that they arm
 * no block nor probe. Called inside describeStoreContract.
 */
export function describeLoopRefusals(factory: StoreFactory): void {
  let store: Store;
  beforeAll(async () => {
    store = await factory({});
  });
  afterAll(async () => {
    await store?.close();
  });

  test('refusals make a failed, refused streak without an age; a failure, a success or another refusal of the op starts a new one', async () => {
    const scope = fresh();
    type Record = NonNullable<FinishAttempt['record']>;
    const record = (result: string, extra: Partial<Record> = {}) => Promise.resolve(store.finishAttempt({ scope, op: 'r', record: { result, failed: true, window: 100, refused: true, ...extra } })).then((r) => r.streak);
    expect(await record('BLOCKED no')).toEqual({ count: 1, failed: true, refused: true });
    expect(await record('BLOCKED no')).toEqual({ count: 2, failed: true, refused: true });
    // Read again by the first step, as by the second.
    expect((await store.beginAttempt({ scope, op: 'r' })).streak).toEqual({ count: 2, failed: true, refused: true });
    // Another refusal of the op is progress.
    expect(await record('INVALID_ARGUMENTS bad')).toEqual({ count: 1, failed: true, refused: true });
    // The same result as a failure of the tool that ran: a streak of failures, with its age.
    expect(await record('INVALID_ARGUMENTS bad', { refused: undefined })).toEqual({ count: 2, failed: true, sinceMs: expect.any(Number) });
    expect(await record('INVALID_ARGUMENTS bad')).toEqual({ count: 3, failed: true, refused: true });
    expect(await record('ok', { failed: false, refused: undefined })).toEqual({ count: 1, failed: false });
    expect(await record('BLOCKED no')).toEqual({ count: 1, failed: true, refused: true });
    // Other ops are apart.
    expect((await store.beginAttempt({ scope, op: 'other' })).streak).toEqual({ count: 0, failed: false });
  });

  test('a streak of refusals past the block threshold hands out no probe, after its cool-down too', async () => {
    const scope = fresh();
    const block = { threshold: 2, cooldownMs: 50, leaseMs: 400, holder: 'h' };
    for (let i = 0; i < 4; i++) await store.finishAttempt({ scope, op: 'p', record: { result: 'BLOCKED no', failed: true, window: 100, refused: true } });
    await sleep(80);
    const probeOf = (r: BeginAttemptResult) => (r.probeClaimed ? 'claimed' : r.probeHeldMs !== undefined ? 'held' : 'none');
    const begun = await Promise.all([0, 1].map(() => Promise.resolve(store.beginAttempt({ scope, op: 'p', block }))));
    expect(begun.map(probeOf)).toEqual(['none', 'none']);
    expect(begun[0]!.streak).toEqual({ count: 4, failed: true, refused: true });
  });
}
