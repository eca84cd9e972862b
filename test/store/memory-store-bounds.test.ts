import { createMemoryStore, StoreUnavailableError, type Store } from '../../src/store';
import { countCall } from './contract-fixtures';

const scope = (i: number) => ({ tenant: 't', sessionId: `s${i}` });

describe('memory store: the session cap', () => {
  const full = (max: number, hold = 3600) => new StoreUnavailableError(`the memory store holds ${max} sessions used within the last ${hold} s (maxSessions; limits.max_sessions in the config file): no new session is kept until one ends or has been idle ${hold} s`);
  const budget = { id: 'send_*', max: 3 };
  const same = { result: 'same', failed: false, window: 100 };
  const left = (store: Store, i: number) => countCall(store, scope(i), budget, 'op');

  // Found in review: past the cap the least recently used tenth was evicted with its budget
  // counts and loop window, so other sessions' calls started a session's budget again.
  it('with maxSessions live sessions a new one is refused StoreUnavailableError, counting and claiming nothing; the live ones keep their budgets and streaks', async () => {
    const store = createMemoryStore({ maxSessions: 10 });
    for (let i = 0; i < 10; i++) {
      expect(await left(store, i)).toBe(2);
      await store.finishAttempt({ scope: scope(i), op: 'op', record: same });
    }
    await expect(Promise.resolve(store.beginAttempt({ scope: scope(10), op: 'op', budget, claim: { key: 'k', leaseMs: 60_000 } }))).rejects.toEqual(full(10));
    await expect(Promise.resolve(store.beginAttempt({ scope: scope(11), op: 'op' }))).rejects.toEqual(full(10));
    for (let i = 0; i < 10; i++) {
      expect((await store.beginAttempt({ scope: scope(i), op: 'op' })).streak).toEqual({ count: 1, failed: false });
      expect(await left(store, i)).toBe(1);
    }
  });

  it('EndSession makes room at once; sessions idle past their hold make room, longest idle first, a tenth of the cap at a time', async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSessions: 3, now: () => clock });
    for (let i = 0; i < 3; i++) {
      clock = i * 1000;
      expect(await left(store, i)).toBe(2);
      await store.finishAttempt({ scope: scope(i), op: 'op', record: same });
    }
    await expect(Promise.resolve(store.beginAttempt({ scope: scope(3), op: 'op' }))).rejects.toEqual(full(3));
    await store.endSession(scope(2));
    expect((await store.beginAttempt({ scope: scope(3), op: 'op' })).streak.count).toBe(0);
    // Sessions 0 and 1 are held until an hour after their last call, session 3 an hour after 2 s.
    clock = 3_600_000 - 1;
    await expect(Promise.resolve(store.beginAttempt({ scope: scope(4), op: 'op' }))).rejects.toEqual(full(3));
    // Session 0 has been idle an hour: it goes (the longest idle), with its window and budget.
    clock = 3_600_000;
    expect((await store.beginAttempt({ scope: scope(4), op: 'op' })).streak.count).toBe(0);
    clock = 3_601_000;
    expect((await store.beginAttempt({ scope: scope(1), op: 'op' })).streak.count).toBe(1);
    expect(await left(store, 1)).toBe(1);
    // Sessions 1, 3 and 4 are now all held: session 0 comes back as a new one only once room is made.
    await expect(Promise.resolve(store.beginAttempt({ scope: scope(0), op: 'op' }))).rejects.toEqual(full(3));
  });

  it('a session in use keeps its budget and streak whatever the traffic of other sessions; idle ones make its room', async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSessions: 100, sessionHoldSeconds: 60, now: () => clock });
    expect(await left(store, 0)).toBe(2);
    await store.finishAttempt({ scope: scope(0), op: 'op', record: same });
    // 2,000 other sessions over 2,000 s, each one call; session 0 calls every 30 s.
    for (let i = 1; i <= 2000; i++) {
      clock = i * 1000;
      await store.finishAttempt({ scope: scope(i), op: 'op', record: same });
      if (i % 30 === 0) await store.finishAttempt({ scope: scope(0), op: 'op', record: same });
    }
    expect((await store.beginAttempt({ scope: scope(0), op: 'op' })).streak.count).toBe(1 + Math.floor(2000 / 30));
    expect(await left(store, 0)).toBe(1);
    expect((await store.beginAttempt({ scope: scope(1), op: 'op' })).streak.count).toBe(0);
  });

  it('a budget count keeps its session past the window TTL; the window itself starts again then, as on Redis', async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSessions: 1, windowTtlSeconds: 10, budgetTtlSeconds: 100, now: () => clock });
    expect(await left(store, 0)).toBe(2);
    await store.finishAttempt({ scope: scope(0), op: 'op', record: same });
    clock = 10_000;
    await expect(Promise.resolve(store.beginAttempt({ scope: scope(1), op: 'op' }))).rejects.toEqual(full(1));
    expect((await store.beginAttempt({ scope: scope(0), op: 'op' })).streak.count).toBe(0);
    expect(await left(store, 0)).toBe(1);
  });

  it("a refused session's idempotency record is still written: an identical call replays it once there is room", async () => {
    const store = createMemoryStore({ maxSessions: 1 });
    await store.finishAttempt({ scope: scope(0), op: 'op', record: same });
    const done = { key: 'k', action: 'complete' as const, result: { output: 'sent', isError: false, resolvedToolName: 't', truncated: false, resultHandle: '', durationMs: 1 }, ttlSeconds: 60 };
    await expect(Promise.resolve(store.finishAttempt({ scope: scope(1), op: 'op', record: same, idempotency: done }))).rejects.toEqual(full(1));
    await store.endSession(scope(0));
    expect((await store.beginAttempt({ scope: scope(1), op: 'op', claim: { key: 'k', leaseMs: 1000 } })).claim).toEqual({ state: 'completed', result: done.result });
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
