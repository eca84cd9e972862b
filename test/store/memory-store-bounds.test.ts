import { createMemoryStore, StoreUnavailableError, type Store } from '../../src/store';
import { countCall } from './contract-fixtures';

const scope = (i: number) => ({ tenant: 't', sessionId: `s${i}` });

describe('memory store: the session cap', () => {
  const full = (max: number) => new StoreUnavailableError(`the memory store holds ${max} live sessions (maxSessions; limits.max_sessions in the config file): no new session is kept until one ends or expires, 86400 s after its last call`);
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

  it('EndSession makes room at once; a session idle past its TTL when room is needed, unless a spilled result or memory entry of it still lives', async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSessions: 3, now: () => clock });
    await store.finishAttempt({ scope: scope(0), op: 'op', record: same });
    await store.finishAttempt({ scope: scope(1), op: 'op', memory: { entry: 'kept', max: 10, ttlSeconds: 2 * 86_400 } });
    await store.finishAttempt({ scope: scope(2), op: 'op', record: same });
    await expect(Promise.resolve(store.beginAttempt({ scope: scope(3), op: 'op' }))).rejects.toEqual(full(3));
    await store.endSession(scope(2));
    expect((await store.beginAttempt({ scope: scope(3), op: 'op' })).streak.count).toBe(0);
    clock = 86_400_000 - 1;
    await expect(Promise.resolve(store.beginAttempt({ scope: scope(4), op: 'op' }))).rejects.toEqual(full(3));
    // Sessions 0 and 3 expire 24 h after their last call; session 1 holds its memory a day more.
    clock = 86_400_000;
    expect((await store.beginAttempt({ scope: scope(4), op: 'op' })).streak.count).toBe(0);
    expect((await store.beginAttempt({ scope: scope(5), op: 'op' })).streak.count).toBe(0);
    await expect(Promise.resolve(store.beginAttempt({ scope: scope(6), op: 'op' }))).rejects.toEqual(full(3));
    expect(await store.memory(scope(1))).toEqual(['kept']);
  });

  it('a budget count keeps its session past the window TTL; the window itself starts again then, as on Redis', async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSessions: 1, windowTtlSeconds: 10, budgetTtlSeconds: 100, now: () => clock });
    expect(await left(store, 0)).toBe(2);
    await store.finishAttempt({ scope: scope(0), op: 'op', record: same });
    clock = 10_000;
    await expect(Promise.resolve(store.beginAttempt({ scope: scope(1), op: 'op' }))).rejects.toEqual(new StoreUnavailableError('the memory store holds 1 live sessions (maxSessions; limits.max_sessions in the config file): no new session is kept until one ends or expires, 10 s after its last call'));
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
