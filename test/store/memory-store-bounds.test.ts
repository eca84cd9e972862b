import { createMemoryStore, type Store } from '../../src/store';
import { countCall } from './contract-fixtures';

const scope = (i: number) => ({ tenant: 't', sessionId: `s${i}` });

describe('memory store: the session cap', () => {
  const budget = { id: 'send_*', max: 3 };
  const same = { result: 'same', failed: false, window: 100 };
  const of = (tenant: string, i: number) => ({ tenant, sessionId: `s${i}` });
  const left = (store: Store, i: number, tenant = 't') => countCall(store, of(tenant, i), budget, 'op');
  const streakOf = async (store: Store, i: number, tenant = 't') => (await store.beginAttempt({ scope: of(tenant, i), op: 'op' })).streak.count;
  const use = (store: Store, i: number, tenant = 't') => store.finishAttempt({ scope: of(tenant, i), op: 'op', record: same });

  it('a new session is never refused; sessions idle past their hold make room first, longest idle first, a tenth of the cap at a time', async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSessions: 10, now: () => clock });
    for (let i = 0; i < 10; i++) {
      clock = i * 1000;
      expect(await left(store, i)).toBe(2);
      await use(store, i);
    }
    // Sessions 0 and 1 have been idle an hour: the new session takes the room of the longer idle.
    clock = 3_601_000;
    await use(store, 10);
    for (let i = 1; i < 11; i++) expect(await streakOf(store, i)).toBe(1);
    for (let i = 1; i < 10; i++) expect(await left(store, i)).toBe(1);
    expect(await streakOf(store, 0)).toBe(0);
  });

  it("expired sessions go before idle ones; an idle session's spills and memory entries go with it", async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSessions: 3, windowTtlSeconds: 10, now: () => clock });
    await use(store, 0);
    await store.finishAttempt({ scope: of('t', 1), op: 'op', memory: { entry: 'kept', max: 10, ttlSeconds: 86_400 } });
    clock = 1000;
    await use(store, 2);
    clock = 3_700_000;
    // Session 0 expired (10 s); session 1 holds its memory a day but has been idle an hour; session 2 expired too.
    await use(store, 3);
    expect(await store.memory(of('t', 1))).toEqual(['kept']);
    await use(store, 4);
    await use(store, 5);
    expect(await store.memory(of('t', 1))).toEqual([]);
  });

  it("with every session used within the hold, the tenants holding the most give way, least recently used first; the others keep their budgets and streaks", async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSessions: 100, now: () => clock });
    for (let i = 0; i < 5; i++) {
      expect(await left(store, i, 'acme')).toBe(2);
      await use(store, i, 'acme');
    }
    // Another tenant opens 1,000 sessions within the hour: it pushes out its own.
    for (let i = 0; i < 1000; i++) {
      clock = i;
      await use(store, i, 'mallory');
    }
    for (let i = 0; i < 5; i++) {
      expect(await streakOf(store, i, 'acme')).toBe(1);
      expect(await left(store, i, 'acme')).toBe(1);
    }
    expect(await streakOf(store, 999, 'mallory')).toBe(1);
    expect(await streakOf(store, 0, 'mallory')).toBe(0);
  });

  it('with more tenants than room, one session goes, the least recent of the largest; a tenant over an equal share is cut to it, no further', async () => {
    let clock = 0;
    const small = createMemoryStore({ maxSessions: 3, now: () => clock });
    for (const [i, tenant] of ['acme', 'globex', 'initech'].entries()) {
      clock = i;
      await use(small, 0, tenant);
    }
    clock = 10;
    await use(small, 0, 'mallory');
    expect(await Promise.all(['globex', 'initech', 'mallory'].map((tenant) => streakOf(small, 0, tenant)))).toEqual([1, 1, 1]);

    const store = createMemoryStore({ maxSessions: 100, now: () => clock });
    for (let i = 0; i < 70; i++) await use(store, i, 'big');
    for (let i = 0; i < 200; i++) await use(store, i, 'flood');
    // 'big' keeps an equal share of the room left once a tenth is freed (45 of 90), its most recent.
    let kept = 0;
    for (let i = 69; i >= 0; i--) if ((await store.beginAttempt({ scope: of('big', i), op: 'op' })).streak.count === 1) kept++;
    expect(kept).toBeGreaterThanOrEqual(45);
  });

  it('a session in use keeps its budget and streak whatever the traffic of other sessions; idle ones make its room', async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSessions: 100, sessionHoldSeconds: 60, now: () => clock });
    expect(await left(store, 0)).toBe(2);
    await use(store, 0);
    // 2,000 other sessions over 2,000 s, each one call; session 0 calls every 30 s.
    for (let i = 1; i <= 2000; i++) {
      clock = i * 1000;
      await use(store, i);
      if (i % 30 === 0) await use(store, 0);
    }
    expect(await streakOf(store, 0)).toBe(1 + Math.floor(2000 / 30));
    expect(await left(store, 0)).toBe(1);
    expect(await streakOf(store, 1)).toBe(0);
  });

  it('a budget count keeps its session past the window TTL; the window itself starts again then, as on Redis', async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSessions: 2, windowTtlSeconds: 10, budgetTtlSeconds: 100, now: () => clock });
    expect(await left(store, 0)).toBe(2);
    await use(store, 0);
    clock = 10_000;
    expect(await streakOf(store, 0)).toBe(0);
    expect(await left(store, 0)).toBe(1);
  });

  it("an evicted session's idempotency records stay: an identical call replays", async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSessions: 1, now: () => clock });
    const done = { key: 'k', action: 'complete' as const, result: { output: 'sent', isError: false, resolvedToolName: 't', truncated: false, resultHandle: '', durationMs: 1 }, ttlSeconds: 7200 };
    await store.finishAttempt({ scope: of('t', 0), op: 'op', record: same, idempotency: done });
    clock = 3_600_000;
    await use(store, 1);
    expect(await streakOf(store, 0)).toBe(0);
    expect((await store.beginAttempt({ scope: of('t', 0), op: 'op', claim: { key: 'k', leaseMs: 1000 } })).claim).toEqual({ state: 'completed', result: done.result });
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
