import { createMemoryStore, StoreUnavailableError, type SessionScope, type Store, type StoredResult } from '../../src/store';

const scope = (i: number): SessionScope => ({ tenant: 't', sessionId: `s${i}` });
const result = (chars: number): StoredResult => ({ output: 'x'.repeat(chars), isError: false, resolvedToolName: 't', truncated: false, resultHandle: '', durationMs: 1 });

const claim = async (store: Store, s: SessionScope, key: string, leaseMs = 60_000) => (await store.beginAttempt({ scope: s, op: 'op', claim: { key, leaseMs, owner: key } })).claim?.state;
const complete = (store: Store, s: SessionScope, key: string, chars = 1) => store.finishAttempt({ scope: s, op: 'op', idempotency: { key, action: 'complete', result: result(chars), ttlSeconds: 3600 } });

// Found in review: finished idempotency records held their whole stored output and were capped
// only in number (10,000 per session, 10,000 sessions), never in size: ~95 MiB for 12,000 records
// of 8,000 characters, growing linearly.
describe('memory store: finished idempotency records across sessions', () => {
  it('past maxRecordChars the oldest finished records go, whichever session holds them; a claim in progress stays', async () => {
    // A record counts its key and its result's texts: 1 + 200 + 1 characters here.
    const store = createMemoryStore({ maxRecordChars: 1000 });
    expect(await claim(store, scope(9), 'running')).toBe('claimed');
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) {
      await claim(store, scope(i % 2), key);
      await complete(store, scope(i % 2), key, 200);
    }
    expect(await claim(store, scope(0), 'a')).toBe('completed');
    await claim(store, scope(0), 'e');
    await complete(store, scope(0), 'e', 200);
    // 1,010 characters: the oldest go until a tenth below the budget.
    expect(await claim(store, scope(1), 'b')).toBe('completed');
    expect(await claim(store, scope(0), 'e')).toBe('completed');
    expect(await claim(store, scope(9), 'running')).toBe('in_progress');
    expect(await claim(store, scope(0), 'a')).toBe('claimed');
  });

  it('a record larger than the whole budget is kept alone, never lost at once', async () => {
    const store = createMemoryStore({ maxRecordChars: 100 });
    await complete(store, scope(1), 'small', 10);
    await complete(store, scope(2), 'big', 500);
    expect(await claim(store, scope(2), 'big')).toBe('completed');
    expect(await claim(store, scope(1), 'small')).toBe('claimed');
  });

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

describe('memory store: session budgets', () => {
  it('live budgetTtlSeconds (default 86,400) after the last counted call, as on Redis', async () => {
    let clock = 0;
    const begin = (store: Store) => Promise.resolve(store.beginAttempt({ scope: scope(1), op: 'op', budget: { id: 'b', max: 1 } }));
    const store = createMemoryStore({ now: () => clock });
    expect((await begin(store)).budgetLeft).toBe(0);
    clock = 86_400_000 - 1;
    expect((await begin(store)).overBudget).toBe(true);
    clock = 86_400_000;
    expect((await begin(store)).budgetLeft).toBe(0);
    const brief = createMemoryStore({ budgetTtlSeconds: 10, now: () => clock });
    expect((await begin(brief)).budgetLeft).toBe(0);
    clock += 9_999;
    expect((await begin(brief)).overBudget).toBe(true);
    clock += 1;
    expect((await begin(brief)).budgetLeft).toBe(0);
  });
});

describe('memory store: options', () => {
  it('rejects a bound that is not a positive integer, naming it', () => {
    expect(() => createMemoryStore({ maxClaims: 0 })).toThrow(new RangeError('memory store option maxClaims must be a positive integer, got 0'));
    expect(() => createMemoryStore({ maxRecordChars: 2.5 })).toThrow(new RangeError('memory store option maxRecordChars must be a positive integer, got 2.5'));
    expect(() => createMemoryStore({ budgetTtlSeconds: -1 })).toThrow(new RangeError('memory store option budgetTtlSeconds must be a positive integer, got -1'));
  });
});
