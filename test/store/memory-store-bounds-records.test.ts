import { createMemoryStore, StoreUnavailableError, type SessionScope, type Store, type StoredResult } from '../../src/store';

const scope = (i: number): SessionScope => ({ tenant: 't', sessionId: `s${i}` });
const result = (chars: number): StoredResult => ({ output: 'x'.repeat(chars), isError: false, resolvedToolName: 't', truncated: false, resultHandle: '', durationMs: 1 });

const claim = async (store: Store, s: SessionScope, key: string, leaseMs = 60_000) => (await store.beginAttempt({ scope: s, op: 'op', claim: { key, leaseMs, owner: key } })).claim?.state;
const complete = (store: Store, s: SessionScope, key: string, chars = 1) => store.finishAttempt({ scope: s, op: 'op', idempotency: { key, action: 'complete', result: result(chars), ttlSeconds: 3600 } });

// Found in review: a session evicted by the session cap took its idempotency records with it;
// kept apart, they are bounded across sessions instead.
describe('memory store: finished idempotency records across sessions', () => {
  it('past maxRecords the oldest tenth of finished records goes; claims in progress neither count nor go', async () => {
    const store = createMemoryStore({ maxRecords: 10 });
    for (let i = 0; i < 5; i++) expect(await claim(store, scope(100 + i), 'running')).toBe('claimed');
    for (let i = 0; i <= 10; i++) await complete(store, scope(i), 'k');
    const states = [];
    for (let i = 0; i <= 10; i++) states.push(await claim(store, scope(i), 'k'));
    expect(states).toEqual(['claimed', 'claimed', ...Array(9).fill('completed')]);
    for (let i = 0; i < 5; i++) expect(await claim(store, scope(100 + i), 'running')).toBe('in_progress');
  });
});

describe('memory store: idempotency claims in progress', () => {
  const refusal = new StoreUnavailableError('the memory store holds 3 idempotency claims in progress (maxClaims): no other is taken until one of them ends');

  it('past maxClaims a new claim is refused StoreUnavailableError (the call fails closed) with nothing counted; one ending makes room', async () => {
    const store = createMemoryStore({ maxClaims: 3 });
    for (const i of [1, 2, 3]) expect(await claim(store, scope(i), 'k')).toBe('claimed');
    const budget = { id: 'send_*', max: 1 };
    await expect(Promise.resolve(store.beginAttempt({ scope: scope(4), op: 'op', budget, claim: { key: 'k', leaseMs: 60_000 } }))).rejects.toEqual(refusal);
    // The refused call was not counted against its budget; a call without a claim still goes.
    expect((await store.beginAttempt({ scope: scope(4), op: 'op', budget })).budgetLeft).toBe(0);
    // Identical calls still find the running claims.
    expect(await claim(store, scope(1), 'k')).toBe('in_progress');
    await complete(store, scope(1), 'k');
    expect(await claim(store, scope(4), 'k')).toBe('claimed');
    await store.finishAttempt({ scope: scope(2), op: 'op', idempotency: { key: 'k', action: 'release', owner: 'k' } });
    expect(await claim(store, scope(5), 'k')).toBe('claimed');
    await expect(claim(store, scope(6), 'k')).rejects.toEqual(refusal);
  });

  it('claims whose lease ended make room', async () => {
    let clock = 0;
    const store = createMemoryStore({ maxClaims: 3, now: () => clock });
    for (const i of [1, 2, 3]) expect(await claim(store, scope(i), 'k', i * 1000)).toBe('claimed');
    await expect(claim(store, scope(4), 'k')).rejects.toEqual(refusal);
    clock = 1000;
    expect(await claim(store, scope(4), 'k')).toBe('claimed');
    await expect(claim(store, scope(5), 'k')).rejects.toEqual(refusal);
    clock = 3000;
    expect(await claim(store, scope(5), 'k')).toBe('claimed');
    expect(await claim(store, scope(6), 'k')).toBe('claimed');
    expect(await claim(store, scope(4), 'k')).toBe('in_progress');
  });
});

describe('memory store: options', () => {
  it('rejects a bound that is not a positive integer, naming it', () => {
    expect(() => createMemoryStore({ maxClaims: 0 })).toThrow(new RangeError('memory store option maxClaims must be a positive integer, got 0'));
    expect(() => createMemoryStore({ maxRecords: 2.5 })).toThrow(new RangeError('memory store option maxRecords must be a positive integer, got 2.5'));
  });
});
