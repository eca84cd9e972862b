import { createMemoryStore, type SessionScope, type Store, type StoredResult } from '../../src/store';
import { createSpillBudget } from '../../src/store/spill-budget';
import { TenantShares, TRIM_CHUNK } from '../../src/store/tenant-shares';

// Found in a tenant-isolation hunt: past the memory store's store-wide bounds on finished
// idempotency records and on spilled results, the oldest went whichever tenant held them, so one
// tenant's flood (a side-effecting tool of 2 M-character results, 48 calls) evicted another's
// record and its retried side effect ran twice. Past a bound, the tenants holding more than an
// equal share now lose their own oldest first, down to it, as for sessions and loop windows.

const of = (tenant: string, sessionId = 's'): SessionScope => ({ tenant, sessionId });
const result = (chars: number): StoredResult => ({ output: 'x'.repeat(chars), isError: false, resolvedToolName: 't', truncated: false, resultHandle: '', durationMs: 1 });
const claim = async (store: Store, scope: SessionScope, key: string) => (await store.beginAttempt({ scope, op: 'op', claim: { key, leaseMs: 60_000, owner: key } })).claim?.state;
const complete = (store: Store, scope: SessionScope, key: string, chars: number, ttlSeconds = 3600) =>
  store.finishAttempt({ scope, op: 'op', idempotency: { key, action: 'complete', result: result(chars), ttlSeconds } });

describe('memory store: finished idempotency records, shared out by tenant', () => {
  it("past maxRecordChars another tenant's flood evicts its own oldest records, not a tenant's within its share", async () => {
    // A record counts its key and its result's texts: 'pay' 3 + 200 + 1, 'kN' 2 + 200 + 1.
    const store = createMemoryStore({ maxRecordChars: 1000 });
    await claim(store, of('victim'), 'pay');
    await complete(store, of('victim'), 'pay', 200);
    expect(await claim(store, of('flooder', 'run'), 'running')).toBe('claimed');
    for (let i = 0; i < 10; i++) {
      await claim(store, of('flooder', `f${i}`), `k${i}`);
      await complete(store, of('flooder', `f${i}`), `k${i}`, 200);
    }
    expect(await claim(store, of('victim'), 'pay')).toBe('completed');
    // The flooder's oldest went, its newest stayed; its claim in progress too.
    expect(await claim(store, of('flooder', 'f0'), 'k0')).toBe('claimed');
    expect(await claim(store, of('flooder', 'f9'), 'k9')).toBe('completed');
    expect(await claim(store, of('flooder', 'run'), 'running')).toBe('in_progress');
  });

  it('past maxRecords likewise, by count', async () => {
    const store = createMemoryStore({ maxRecords: 10 });
    for (const key of ['a', 'b']) await complete(store, of('victim'), key, 1);
    for (let i = 0; i < 30; i++) await complete(store, of('flooder', `f${i}`), 'k', 1);
    expect(await claim(store, of('victim'), 'a')).toBe('completed');
    expect(await claim(store, of('victim'), 'b')).toBe('completed');
    expect(await claim(store, of('flooder', 'f0'), 'k')).toBe('claimed');
    expect(await claim(store, of('flooder', 'f29'), 'k')).toBe('completed');
  });

  it("two tenants past their share each lose their own oldest, down to an equal share", async () => {
    const store = createMemoryStore({ maxRecords: 10 });
    for (let i = 0; i < 6; i++) await complete(store, of('a', `s${i}`), 'k', 1);
    for (let i = 0; i < 5; i++) await complete(store, of('b', `s${i}`), 'k', 1);
    // 11 records: down to 9, each tenant to 4 at most (the record just written stays).
    const held = async (tenant: string, n: number) => {
      const states = [];
      for (let i = 0; i < n; i++) states.push(await claim(store, of(tenant, `s${i}`), 'k'));
      return states;
    };
    expect(await held('a', 6)).toEqual(['claimed', 'claimed', 'completed', 'completed', 'completed', 'completed']);
    expect(await held('b', 5)).toEqual(['claimed', 'completed', 'completed', 'completed', 'completed']);
  });

  it("expired records give their room back first: a quiet tenant's dead records do not keep a share", async () => {
    let clock = 0;
    const store = createMemoryStore({ maxRecordChars: 1000, now: () => clock });
    for (let i = 0; i < 4; i++) await complete(store, of('quiet'), `q${i}`, 200, 10);
    clock = 20_000;
    for (let i = 0; i < 4; i++) await complete(store, of('busy'), `k${i}`, 200);
    for (let i = 0; i < 4; i++) expect(await claim(store, of('busy'), `k${i}`)).toBe('completed');
  });
});

// Found in a review of the chunked trim: only the entry of the call under way was spared, so the
// next call of a pass (anyone's, the store back within its bound) evicted the previous call's
// record if its tenant was still over its share: the retry of a call whose response was lost ran
// its tool again. Before the pass was cut into calls that record stayed until the bound was next passed.
describe('memory store: a trim pass spread over calls', () => {
  it("keeps the record of a call that began it: another tenant's next call does not evict it", async () => {
    const store = createMemoryStore({ maxRecordChars: 10 * 1024 * 1024 });
    // ~99% of the bound in 10 tenants' small records, then t0's large result passes it: the pass
    // goes on past that call (a tenth of the bound is ~3,000 of these records, over TRIM_CHUNK).
    for (let i = 0; i < 29_650; i++) await complete(store, of(`t${i % 10}`, `s${i % 10}`), `k${i}`, 330);
    await claim(store, of('t0', 'big'), 'big');
    await complete(store, of('t0', 'big'), 'big', 1300 * 1024);
    await complete(store, of('t3', 'other'), 'one-more', 330);
    expect(await claim(store, of('t0', 'big'), 'big')).toBe('completed');
    await store.close();
  });
});

describe('memory store: spilled results, shared out by tenant', () => {
  const handle = (session: string, n: number) => `rh_${Buffer.from(session).toString('base64url')}.${String(n).padStart(16, 'A')}`;
  const spill = (store: Store, scope: SessionScope, h: string, chars: number, ttlSeconds = 60) =>
    store.finishAttempt({ scope, op: 'op', spill: { handle: h, text: 'x'.repeat(chars), ttlSeconds } });

  it("past maxSpilledChars another tenant's spills evict its own oldest, not a tenant's within its share", async () => {
    const store = createMemoryStore({ maxSpilledChars: 100 });
    const mine = handle('pay', 1);
    await spill(store, of('victim', 'pay'), mine, 20);
    const flood = [1, 2, 3, 4, 5].map((n) => handle('f', n));
    for (const h of flood) await spill(store, of('flooder', 'f'), h, 40);
    expect(await store.readResult('victim', mine)).toHaveLength(20);
    expect(await store.readResult('flooder', flood[0]!)).toBeUndefined();
    expect(await store.readResult('flooder', flood[4]!)).toHaveLength(40);
  });

  it("expired spills give their room back first", async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSpilledChars: 100, now: () => clock });
    await spill(store, of('quiet', 'q'), handle('q', 1), 30, 1);
    clock = 2000;
    // 120 characters: the expired spill goes, and that is enough (kept, it would hold a share of 30).
    const busy = [handle('b', 1), handle('b', 2)];
    for (const h of busy) await spill(store, of('busy', 'b'), h, 45);
    for (const h of busy) expect(await store.readResult('busy', h)).toHaveLength(45);
  });

  // Review of 928114d: the spills of a session ended or evicted stayed counted against their
  // tenant's share until they expired (an hour by default), so another tenant's live spills went
  // in their place: of B's 9 below, only the last 5 were readable.
  const nine = async (store: Store) => {
    const b = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => handle('b1', n));
    for (const h of b) await spill(store, of('B', 'b1'), h, 1000, 3600);
    return Promise.all(b.map(async (h) => ((await store.readResult('B', h)) ? 1 : 0)));
  };

  it("the spills of a session ended no longer count: another tenant's live spills stay", async () => {
    const store = createMemoryStore({ maxSpilledChars: 10_000 });
    const a = [1, 2, 3, 4].map((n) => handle('a1', n));
    for (const h of a) await spill(store, of('A', 'a1'), h, 1000, 3600);
    await store.endSession(of('A', 'a1'));
    expect((await nine(store)).join('')).toBe('111111111');
    // Ended twice: nothing uncounted twice (the budget still holds B's 9000 and takes 1000 more).
    await store.endSession(of('A', 'a1'));
    await spill(store, of('C', 'c1'), handle('c1', 1), 1000, 3600);
    expect((await nine(store)).join('')).toBe('111111111');
  });

  it("the spills of a session evicted for room no longer count either", async () => {
    let clock = 0;
    const store = createMemoryStore({ maxSpilledChars: 10_000, maxSessions: 2, sessionHoldSeconds: 1, now: () => clock });
    const a = [1, 2, 3, 4].map((n) => handle('a1', n));
    for (const h of a) await spill(store, of('A', 'a1'), h, 1000, 3600);
    clock = 2000;
    await store.beginAttempt({ scope: of('B', 'b1'), op: 'op' });
    // A third session: a1, idle past its hold, is evicted.
    await store.beginAttempt({ scope: of('C', 'c1'), op: 'op' });
    expect(await store.readResult('A', a[0]!)).toBeUndefined();
    expect((await nine(store)).join('')).toBe('111111111');
  });
});

// Trajectory memory was bounded store-wide oldest first across all tenants: one tenant's flood of
// memory writes evicted every other tenant's entries (here all 5 of the victim's went).
describe('memory store: trajectory memory, shared out by tenant', () => {
  const remember = (store: Store, scope: SessionScope, entry: string, ttlSeconds = 60) =>
    store.finishAttempt({ scope, op: 'op', memory: { entry, max: 1000, ttlSeconds } });
  const entry = (name: string) => name.padEnd(100, '.');

  it("past maxMemoryChars another tenant's flood evicts its own oldest entries, not a tenant's within its share", async () => {
    const store = createMemoryStore({ maxMemoryChars: 2000 });
    for (let i = 0; i < 5; i++) await remember(store, of('victim'), entry(`v${i}`));
    for (let i = 0; i < 60; i++) await remember(store, of('flooder', `f${i % 3}`), entry(`f${i}`));
    expect((await store.memory(of('victim'))).map((e) => e.slice(0, 2))).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
    // The flooder keeps its newest, within the rest of the budget (2,000 less the victim's 500).
    const flooder = [...(await store.memory(of('flooder', 'f0'))), ...(await store.memory(of('flooder', 'f1'))), ...(await store.memory(of('flooder', 'f2')))];
    expect(flooder.length).toBeLessThanOrEqual(15);
    expect(flooder.map((e) => e.split('.')[0])).toContain('f59');
    expect(flooder.map((e) => e.split('.')[0])).not.toContain('f0');
    await store.close();
  });

  it('two tenants past their share each lose their own oldest, down to an equal share', async () => {
    const store = createMemoryStore({ maxMemoryChars: 1000 });
    for (let i = 0; i < 6; i++) await remember(store, of('a'), entry(`a${i}`));
    for (let i = 0; i < 5; i++) await remember(store, of('b'), entry(`b${i}`));
    // 1,100 characters: down to 900, 450 each at most (the entry just written stays).
    expect((await store.memory(of('a'))).map((e) => e.slice(0, 2))).toEqual(['a2', 'a3', 'a4', 'a5']);
    expect((await store.memory(of('b'))).map((e) => e.slice(0, 2))).toEqual(['b1', 'b2', 'b3', 'b4']);
    await store.close();
  });

  it("expired entries give their room back first: a quiet tenant's dead entries do not keep a share", async () => {
    let clock = 0;
    const store = createMemoryStore({ maxMemoryChars: 1000, now: () => clock });
    for (let i = 0; i < 4; i++) await remember(store, of('quiet'), entry(`q${i}`), 1);
    clock = 2000;
    // Kept counted, q's 400 characters would leave busy 500 (a share of 450 each, then the rest).
    for (let i = 0; i < 10; i++) await remember(store, of('busy'), entry(`b${i}`), 3600);
    expect(await store.memory(of('busy'))).toHaveLength(10);
    await store.close();
  });
});

describe('SpillBudget', () => {
  it('keeps its total exact: a spill uncounted twice, replaced, or capped off counts once', () => {
    const budget = createSpillBudget(100);
    const holder = new Map<string, { expiresAt: number }>();
    const put = (handle: string, chars: number) => {
      const value = { expiresAt: Infinity };
      holder.set(handle, value);
      budget.add('t', holder, handle, value, chars, 0);
    };
    put('a', 10);
    put('b', 20);
    put('a', 5); // written again: the first 'a' is uncounted
    expect(budget.chars).toBe(25);
    budget.drop(holder, 'b');
    budget.drop(holder, 'b');
    expect(budget.chars).toBe(5);
    budget.forget(holder);
    budget.forget(holder);
    budget.drop(holder, 'a');
    expect(budget.chars).toBe(0);
  });
});

describe('TenantShares', () => {
  interface Entry {
    readonly tenant: string;
    readonly name: string;
    readonly chars: number;
    readonly expiresAt: number;
  }
  const entry = (tenant: string, name: string, chars: number, expiresAt = Infinity): Entry => ({ tenant, name, chars, expiresAt });

  it('water-fills: a tenant under the level keeps all; the entry just added stays even past its share', () => {
    const shares = new TenantShares<Entry>({ maxEntries: Infinity, maxChars: 100 });
    const evicted: string[] = [];
    const evict = (e: Entry) => void (evicted.push(e.name), shares.delete(e));
    shares.add(entry('small', 's1', 10));
    for (const [i, chars] of [30, 30, 30].entries()) shares.add(entry('big', `b${i}`, chars));
    shares.add(entry('huge', 'h0', 5));
    const h1 = entry('huge', 'h1', 80);
    shares.add(h1);
    expect(shares.over).toBe(true);
    // Down to 90: levels 10 (small), then 40 each for big and huge.
    shares.trim(h1, 0, evict);
    expect(evicted).toEqual(['b0', 'b1', 'h0']);
    expect([shares.entries, shares.chars]).toEqual([3, 120]);
    const s2 = entry('small', 's2', 1);
    shares.add(s2);
    shares.trim(s2, 0, evict);
    expect(evicted).toEqual(['b0', 'b1', 'h0', 'h1']);
    expect(shares.chars).toBe(41);
  });

  // A pass at the default 200,000 records evicted 20,000 at once: ~15-25 ms of one event-loop
  // turn on a quiet machine (more with its first, cold run, or under load). Past the bound it now
  // gets back within it at once, then goes on TRIM_CHUNK evictions a call, the calls `over` asks for.
  it('once back within the bounds, a call evicts TRIM_CHUNK entries at most; the pass goes on while `over` holds', () => {
    const shares = new TenantShares<Entry>({ maxEntries: 100_000, maxChars: Infinity });
    const victim = ['v0', 'v1', 'v2'].map((name) => entry('victim', name, 1));
    for (const e of victim) shares.add(e);
    let last = victim[2]!;
    for (let i = 0; i < 99_998; i++) shares.add((last = entry('flooder', `f${i}`, 1)));
    expect(shares.over).toBe(true);
    const perCall: number[] = [];
    const tenants = new Set<string>();
    for (let calls = 0; shares.over && calls < 100; calls++) {
      let evicted = 0;
      shares.trim(last, 0, (e) => void (evicted++, tenants.add(e.tenant), shares.delete(e)));
      perCall.push(evicted);
    }
    // 10,001 evictions down to 90,000, in 5 calls; the victim's 3, within its share, all stay.
    expect(perCall).toEqual([TRIM_CHUNK, TRIM_CHUNK, TRIM_CHUNK, TRIM_CHUNK, 10_001 - 4 * TRIM_CHUNK]);
    expect([shares.entries, [...tenants]]).toEqual([90_000, ['flooder']]);
  });

  it('the dead entries likewise go TRIM_CHUNK a call, the look for them going on where it stopped', () => {
    const shares = new TenantShares<Entry>({ maxEntries: 100_000, maxChars: Infinity });
    let last = entry('t', 'none', 0);
    for (let i = 0; i < 100_001; i++) shares.add((last = entry(i % 2 ? 'a' : 'b', `e${i}`, 1, i < 10_000 ? 500 : 5000)));
    const perCall: number[] = [];
    let dead = 0;
    for (let calls = 0; shares.over && calls < 100; calls++) {
      let evicted = 0;
      shares.trim(last, 1000, (e) => void (evicted++, e.expiresAt === 500 && dead++, shares.delete(e)));
      perCall.push(evicted);
    }
    // The 10,000 expired, then one live (b's oldest: a holds one less).
    expect(perCall).toEqual([TRIM_CHUNK, TRIM_CHUNK, TRIM_CHUNK, TRIM_CHUNK, 10_001 - 4 * TRIM_CHUNK]);
    expect([dead, shares.entries]).toEqual([10_000, 90_000]);
  });

  // The calls going on with a pass spare every entry added since it began, not only their own.
  it("a pass going on in later calls keeps the entries added since it began, the first call's too", () => {
    const shares = new TenantShares<Entry>({ maxEntries: Infinity, maxChars: 100_000 });
    const evicted = new Set<string>();
    const evict = (e: Entry) => void (evicted.add(e.name), shares.delete(e));
    for (let i = 0; i < 10; i++) for (let j = 0; j < 9_900; j++) shares.add(entry(`t${i}`, `t${i}-${j}`, 1));
    const big = entry('t0', 'big', 12_000);
    shares.add(big);
    shares.trim(big, 0, evict);
    expect([shares.chars, shares.over]).toEqual([100_000, true]);
    // Others' entries, one a call, each passing the bound by a character: t0's oldest go, not big.
    const added = [big];
    for (let i = 0; shares.over && i < 20; i++) {
      const e = entry(`t${1 + (i % 9)}`, `n${i}`, 1);
      added.push(e);
      shares.add(e);
      shares.trim(e, 0, evict);
      expect(shares.chars).toBeLessThanOrEqual(100_000);
    }
    expect(shares.over).toBe(false);
    expect(added.filter((e) => evicted.has(e.name))).toEqual([]);
    // t0 kept big alone, over its share (9,000 of the 90,000 a tenth below): the pass ended there.
    expect(shares.chars).toBe(12_000 + 9 * 9_000);
  });

  it('one tenant alone: the entry that began the pass stays while the calls going on with it evict', () => {
    const shares = new TenantShares<Entry>({ maxEntries: Infinity, maxChars: 100_000 });
    const evicted = new Set<string>();
    const evict = (e: Entry) => void (evicted.add(e.name), shares.delete(e));
    for (let i = 0; i < 99_000; i++) shares.add(entry('a', `s${i}`, 1));
    const big = entry('a', 'big', 91_000);
    shares.add(big);
    shares.trim(big, 0, evict);
    for (let i = 0; shares.over && i < 10; i++) {
      const small = entry('a', `n${i}`, 1);
      shares.add(small);
      shares.trim(small, 0, evict);
    }
    expect(shares.over).toBe(false);
    expect(evicted.has('big')).toBe(false);
  });

  it('the entries added since the pass began go too when the rest is not enough to get back within the bound', () => {
    const shares = new TenantShares<Entry>({ maxEntries: Infinity, maxChars: 100_000 });
    const evicted = new Set<string>();
    const evict = (e: Entry) => void (evicted.add(e.name), shares.delete(e));
    for (let i = 0; i < 99_000; i++) shares.add(entry('a', `s${i}`, 1));
    const big1 = entry('a', 'big1', 91_000);
    shares.add(big1);
    shares.trim(big1, 0, evict);
    expect(shares.over).toBe(true);
    // 9,000 small ones left and big1: 60,000 more pass the bound by 60,000, the small ones are not enough.
    const big2 = entry('a', 'big2', 60_000);
    shares.add(big2);
    shares.trim(big2, 0, evict);
    expect([evicted.has('big1'), evicted.has('big2'), shares.chars, shares.over]).toEqual([true, false, 60_000, false]);
  });

  it('past a bound, a call evicts whatever it takes to get back within it, more than TRIM_CHUNK if need be', () => {
    const shares = new TenantShares<Entry>({ maxEntries: Infinity, maxChars: 100_000 });
    for (let i = 0; i < 100_000; i++) shares.add(entry('t', `e${i}`, 1));
    const big = entry('t', 'big', 5000);
    shares.add(big);
    let evicted = 0;
    shares.trim(big, 0, (e) => void (evicted++, shares.delete(e)));
    expect(evicted).toBe(5000);
    expect(shares.chars).toBe(100_000);
    expect(shares.over).toBe(true);
  });

  it("looks for dead entries only as far as it must: up to a tenant's first live one when its entries expire in the order added", () => {
    const shares = new TenantShares<Entry>({ maxEntries: 10_000, maxChars: Infinity });
    let looked = 0;
    // Each look at an entry reads its expiry.
    const timed = (tenant: string, name: string, expiresAt: number): Entry => ({ tenant, name, chars: 1, get expiresAt() { return looked++, expiresAt; } });
    for (let i = 0; i < 5000; i++) shares.add(timed('ordered', `o${i}`, 1000 + i));
    // Expiring out of order: looked at whole; its dead entry behind a live one goes all the same.
    for (const [name, at] of [['u0', 5000], ['u1', 1000], ['u2', 6000]] as const) shares.add(timed('mixed', name, at));
    const evicted: string[] = [];
    looked = 0;
    shares.trim(entry('x', 'none', 0), 1010, (e) => void (evicted.push(e.name), shares.delete(e)));
    expect(evicted).toEqual(['o0', 'o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7', 'o8', 'o9', 'o10', 'u1']);
    expect(looked).toBeLessThan(50);
  });

  it('given `gone`, looks for gone entries in every trim, not only once one can have expired', () => {
    const shares = new TenantShares<Entry>({ maxEntries: 10, maxChars: Infinity });
    let looked = 0;
    const gone = () => (looked++, false);
    const evict = (e: Entry) => void shares.delete(e);
    for (const name of ['a', 'b', 'c']) shares.add(entry('t', name, 1, 1000));
    shares.trim(entry('t', 'none', 0), 999, evict, gone);
    expect([looked, shares.entries]).toEqual([3, 3]);
    shares.add(entry('t', 'd', 1, 5000));
    shares.add(entry('t', 'e', 1, 5000));
    shares.trim(entry('t', 'none', 0), 1000, evict, gone);
    // a, b, c expired (gone not asked); d and e looked at, kept.
    expect([looked, shares.entries]).toEqual([5, 2]);
  });
});
