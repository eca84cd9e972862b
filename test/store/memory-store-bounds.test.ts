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

// Found in review: spilled results were capped in number (1,000 per session, 10,000 sessions) but
// not in size, each up to 16 Mi characters kept its TTL, so a tenant could hold memory about
// equal to what its tools returned for an hour.
describe('memory store: the spilled characters across sessions', () => {
  const spill = (handle: string, chars: number) => ({ handle, text: 'x'.repeat(chars), ttlSeconds: 60 });
  const handles = (session: number, n: number) => `rh_${Buffer.from(`s${session}`).toString('base64url')}.${String(n).padStart(16, 'A')}`;

  it('past maxSpilledChars the oldest spills go, whichever session holds them', async () => {
    const store = createMemoryStore({ maxSpilledChars: 100 });
    const h = [handles(1, 1), handles(2, 2), handles(1, 3)];
    await store.finishAttempt({ scope: scope(1), op: 'op', spill: spill(h[0]!, 40) });
    await store.finishAttempt({ scope: scope(2), op: 'op', spill: spill(h[1]!, 40) });
    expect(await store.readResult('t', h[0]!)).toHaveLength(40);
    await store.finishAttempt({ scope: scope(1), op: 'op', spill: spill(h[2]!, 40) });
    expect(await store.readResult('t', h[0]!)).toBeUndefined();
    expect(await store.readResult('t', h[1]!)).toHaveLength(40);
    expect(await store.readResult('t', h[2]!)).toHaveLength(40);
  });

  it('a spill larger than the whole budget is kept alone, never lost at once', async () => {
    const store = createMemoryStore({ maxSpilledChars: 100 });
    const small = handles(1, 1);
    const big = handles(1, 2);
    await store.finishAttempt({ scope: scope(1), op: 'op', spill: spill(small, 10) });
    await store.finishAttempt({ scope: scope(1), op: 'op', spill: spill(big, 500) });
    expect(await store.readResult('t', big)).toHaveLength(500);
    expect(await store.readResult('t', small)).toBeUndefined();
  });

  it('an ended session\'s spills stop counting once they are the oldest', async () => {
    const store = createMemoryStore({ maxSpilledChars: 100 });
    await store.finishAttempt({ scope: scope(1), op: 'op', spill: spill(handles(1, 1), 60) });
    await store.endSession(scope(1));
    const later = [handles(2, 1), handles(2, 2)];
    await store.finishAttempt({ scope: scope(2), op: 'op', spill: spill(later[0]!, 45) });
    await store.finishAttempt({ scope: scope(2), op: 'op', spill: spill(later[1]!, 45) });
    expect(await store.readResult('t', later[0]!)).toHaveLength(45);
    expect(await store.readResult('t', later[1]!)).toHaveLength(45);
  });
});
