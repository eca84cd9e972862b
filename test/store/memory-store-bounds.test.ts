import { createMemoryStore } from '../../src/store';

const scope = (i: number) => ({ tenant: 't', sessionId: `s${i}` });
const remember = (i: number) => ({ entry: `entry ${i}`, max: 10, ttlSeconds: 60 });

describe('memory store: the session cap', () => {
  it('keeps at most max_sessions, evicting the least recently used tenth at once', async () => {
    const store = createMemoryStore({ maxSessions: 100 });
    for (let i = 0; i < 100; i++) await store.finishAttempt({ scope: scope(i), op: 'op', memory: remember(i) });
    // Session 0 is used again, so it is the most recent one.
    expect(await store.memory(scope(0))).toEqual(['entry 0']);
    await store.finishAttempt({ scope: scope(100), op: 'op', memory: remember(100) });
    const kept = [];
    for (let i = 0; i <= 100; i++) if ((await store.memory(scope(i))).length > 0) kept.push(i);
    expect(kept.length).toBe(90);
    expect(kept).toContain(0);
    expect(kept).toContain(100);
    // The evicted ones are the least recently used: 1..11.
    expect(kept).not.toContain(1);
    expect(kept).not.toContain(11);
    expect(kept).toContain(12);
  });

  it('a session used again within a quarter of the cap keeps its place, and is still not among the evicted', async () => {
    const store = createMemoryStore({ maxSessions: 100 });
    for (let i = 0; i < 100; i++) await store.finishAttempt({ scope: scope(i), op: 'op', memory: remember(i) });
    // Sessions 80 and 5 are used again: 80 moved recently enough to stay where it is, 5 moves.
    await store.finishAttempt({ scope: scope(80), op: 'op', memory: remember(80) });
    await store.finishAttempt({ scope: scope(5), op: 'op', memory: remember(5) });
    for (let i = 100; i < 110; i++) await store.finishAttempt({ scope: scope(i), op: 'op', memory: remember(i) });
    const kept: number[] = [];
    for (let i = 0; i < 110; i++) if ((await store.memory(scope(i))).length > 0) kept.push(i);
    expect(kept.length).toBeLessThanOrEqual(100);
    expect(kept).toContain(80);
    expect(kept).toContain(5);
    expect(kept).not.toContain(0);
  });

  it('a session that only read holds no idempotency records or results until it needs them', async () => {
    const store = createMemoryStore();
    await store.beginAttempt({ scope: scope(1), op: 'op' });
    expect(await store.readResult('t', 'missing')).toBeUndefined();
    expect(await store.memory(scope(1))).toEqual([]);
    const claim = await store.beginAttempt({ scope: scope(1), op: 'op', claim: { key: 'k', leaseMs: 1000 } });
    expect(claim.claim).toEqual({ state: 'claimed' });
    await store.finishAttempt({ scope: scope(1), op: 'op', idempotency: { key: 'k', action: 'release' } });
    expect((await store.beginAttempt({ scope: scope(1), op: 'op', claim: { key: 'k', leaseMs: 1000 } })).claim).toEqual({ state: 'claimed' });
  });
});
