import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { idempotencyKey, newResultHandle, streakOf, type SessionScope, type Store, type StoredResult, type WindowEntry } from '../../src/store';
import { fresh, OP, sleep, stored } from './contract-fixtures';
import { describeBudgetGiveBack } from './store-contract-budgets';
import { describeLifetimes } from './store-contract-lifetimes';
import { describeLoopTimes } from './store-contract-loops';
import { describeLoopRefusals } from './store-contract-refusals';
import { describeTenantSessions } from './store-contract-tenant-sessions';

/** Options every store under contract must honour. */
export interface ContractStoreOptions {
  readonly maxResultsPerSession?: number;
  readonly maxRecordsPerSession?: number;
  /** Sessions a store bounding them (the memory store) keeps; the others ignore it. */
  readonly maxSessions?: number;
  /** How long a session's budget counts live after its last counted call (Redis: windowTtlSeconds). */
  readonly budgetTtlSeconds?: number;
}

/** The Redis store's options for the contract's: there the budgets live the loop window's TTL. */
export function redisContractOptions({ budgetTtlSeconds, ...options }: ContractStoreOptions) {
  return { ...options, windowTtlSeconds: budgetTtlSeconds };
}

/** Makes a store for the contract; `close` is called on it after the suite. */
export type StoreFactory = (options: ContractStoreOptions) => Promise<Store>;

/** What sets a store apart under the contract. */
export interface ContractTraits {
  /** The factory's stores share their state, as replicas on one Redis do. @default false */
  readonly shared?: boolean;
}


/**
 * The Store contract (DESIGN sections 5, 6 and 11), run against every implementation: claims,
 * replays, leases, TTLs, the loop window, spilled results, memory and EndSession.
 */
export function describeStoreContract(name: string, factory: StoreFactory, traits: ContractTraits = {}): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    let capped: Store;
    let fewRecords: Store;
    beforeAll(async () => {
      store = await factory({});
      capped = await factory({ maxResultsPerSession: 2 });
      fewRecords = await factory({ maxRecordsPerSession: 3 });
    });
    afterAll(async () => {
      await store?.close();
      await capped?.close();
      await fewRecords?.close();
    });

    const claim = (scope: SessionScope, key: string, leaseMs = 10_000) => Promise.resolve(store.beginAttempt({ scope, op: OP, claim: { key, leaseMs } })).then((r) => r.claim);
    const complete = (scope: SessionScope, key: string, result: StoredResult, ttlSeconds = 60) => store.finishAttempt({ scope, op: OP, idempotency: { key, action: 'complete', result, ttlSeconds } });

    test('past the cap on records per session, old results go but a claim still running stays', async () => {
      const scope = fresh();
      const begin = async (key: string) => (await fewRecords.beginAttempt({ scope, op: OP, claim: { key, leaseMs: 30_000, owner: key } })).claim?.state;
      const done = (key: string) => fewRecords.finishAttempt({ scope, op: OP, idempotency: { key, action: 'complete', result: stored(key), ttlSeconds: 3600 } });
      for (const key of ['a', 'b']) {
        expect(await begin(key)).toBe('claimed');
        await done(key);
      }
      // Claimed first (its tool runs long), then one more call and three more complete: the
      // running claim is the oldest record and expires first, yet an identical call still finds it.
      expect(await begin('running')).toBe('claimed');
      for (const key of ['c', 'd', 'e']) {
        expect(await begin(key)).toBe('claimed');
        await done(key);
      }
      expect(await begin('running')).toBe('in_progress');
      // Completed results past the cap went, the oldest first.
      expect(await begin('a')).toBe('claimed');
      expect(await begin('e')).toBe('completed');
    });

    describeLifetimes(factory);
    describeLoopTimes(factory);
    describeLoopRefusals(factory);
    describeBudgetGiveBack(factory);
    describeTenantSessions(factory);

    test('a first claim is granted; an identical claim while it runs is IN_PROGRESS', async () => {
      const scope = fresh();
      expect(await claim(scope, 'k1')).toEqual({ state: 'claimed' });
      expect(await claim(scope, 'k1')).toEqual({ state: 'in_progress' });
      expect(await claim(scope, 'k2')).toEqual({ state: 'claimed' });
    });

    test('concurrent identical claims: exactly one is granted, the others are IN_PROGRESS; concurrent window records all count', async () => {
      const scope = fresh();
      const claims = await Promise.all(Array.from({ length: 50 }, () => claim(scope, 'race')));
      expect(claims.filter((c) => c?.state === 'claimed')).toHaveLength(1);
      expect(claims.filter((c) => c?.state === 'in_progress')).toHaveLength(49);
      // Twenty identical results recorded at once, then one read: every record counted once.
      await Promise.all(Array.from({ length: 20 }, () => store.finishAttempt({ scope, op: 'count\u0000{}', record: { result: 'same', failed: false, window: 100 } })));
      const { streak } = await store.beginAttempt({ scope, op: 'count\u0000{}' });
      expect(streak).toEqual({ count: 20, failed: false });
    });

    test('a completed record replays the stored result, unicode and all', async () => {
      const scope = fresh();
      const result: StoredResult = { ...stored('envoyé ✉️ "quoted" \\ done'), isError: true, errorKind: 7, errorMessage: 'HTTP 500', recoverable: false, suggestion: 'check', truncated: true, resultHandle: 'rh_x.y' };
      await claim(scope, 'k');
      await complete(scope, 'k', result);
      expect(await claim(scope, 'k')).toEqual({ state: 'completed', result });
    });

    test('an UNKNOWN record answers unknown; a released record can be claimed again', async () => {
      const scope = fresh();
      await claim(scope, 'u');
      await store.finishAttempt({ scope, op: OP, idempotency: { key: 'u', action: 'unknown', ttlSeconds: 60 } });
      expect(await claim(scope, 'u')).toEqual({ state: 'unknown' });
      await claim(scope, 'r');
      await store.finishAttempt({ scope, op: OP, idempotency: { key: 'r', action: 'release' } });
      expect(await claim(scope, 'r')).toEqual({ state: 'claimed' });
    });

    test('a release gives up only its own claim while it is in progress: never a later claim, nor a result', async () => {
      const scope = fresh();
      const claimAs = (key: string, owner: string) => Promise.resolve(store.beginAttempt({ scope, op: OP, claim: { key, leaseMs: 10_000, owner } })).then((r) => r.claim);
      const release = (key: string, owner?: string) => store.finishAttempt({ scope, op: OP, idempotency: { key, action: 'release', owner } });
      expect(await claimAs('k', 'first')).toEqual({ state: 'claimed' });
      expect(await claimAs('k', 'second')).toEqual({ state: 'in_progress' });
      await release('k', 'second');
      expect(await claimAs('k', 'third')).toEqual({ state: 'in_progress' });
      await release('k', 'first');
      expect(await claimAs('k', 'fourth')).toEqual({ state: 'claimed' });
      // A late release of the first claim deletes the fourth's neither.
      await release('k', 'first');
      expect(await claimAs('k', 'fifth')).toEqual({ state: 'in_progress' });
      // Nor a completed record, with an owner or without.
      await complete(scope, 'k', stored('done'));
      await release('k', 'fourth');
      await release('k');
      expect(await claimAs('k', 'sixth')).toEqual({ state: 'completed', result: stored('done') });
      // Without an owner (none, or empty) a release gives up whichever claim is in progress.
      expect(await claimAs('k2', 'seventh')).toEqual({ state: 'claimed' });
      await release('k2', '');
      expect(await claimAs('k2', 'eighth')).toEqual({ state: 'claimed' });
    });

    test('a read without a claim neither claims nor reports a record', async () => {
      const scope = fresh();
      expect(await store.beginAttempt({ scope, op: OP })).toEqual({ streak: { count: 0, failed: false } });
      expect(await claim(scope, 'k')).toEqual({ state: 'claimed' });
      expect((await store.beginAttempt({ scope, op: OP })).claim).toBeUndefined();
    });

    test('findRecord reads the state of a live record and changes nothing', async () => {
      const scope = fresh();
      const find = (key: string) => Promise.resolve(store.findRecord(scope, key));
      expect(await find('k')).toBeUndefined();
      // The look claims nothing: the call's own claim after it is granted.
      expect(await claim(scope, 'k')).toEqual({ state: 'claimed' });
      expect(await find('k')).toBe('in_progress');
      await complete(scope, 'k', stored('done'));
      expect(await find('k')).toBe('completed');
      expect(await claim(scope, 'k')).toEqual({ state: 'completed', result: stored('done') });
      await claim(scope, 'u');
      await store.finishAttempt({ scope, op: OP, idempotency: { key: 'u', action: 'unknown', ttlSeconds: 60 } });
      expect(await find('u')).toBe('unknown');
      await claim(scope, 'r');
      await store.finishAttempt({ scope, op: OP, idempotency: { key: 'r', action: 'release' } });
      expect(await find('r')).toBeUndefined();
      // Another session's record of the same key is not this one's.
      expect(await Promise.resolve(store.findRecord(fresh(scope.tenant), 'k'))).toBeUndefined();
      // Nor a record past its TTL (half a second: TTLs are kept to the millisecond).
      await claim(scope, 'short');
      await complete(scope, 'short', stored('brief'), 0.5);
      await sleep(600);
      expect(await find('short')).toBeUndefined();
    });

    test('a lease lapses after leaseMs; records and unknown marks after their TTL', async () => {
      const scope = fresh();
      await claim(scope, 'lease', 300);
      await claim(scope, 'done');
      await complete(scope, 'done', stored('ok'), 0.5);
      await claim(scope, 'unk');
      await store.finishAttempt({ scope, op: OP, idempotency: { key: 'unk', action: 'unknown', ttlSeconds: 0.5 } });
      await claim(scope, 'long');
      await complete(scope, 'long', stored('kept'), 60);
      expect(await claim(scope, 'lease', 300)).toEqual({ state: 'in_progress' });
      await sleep(700);
      expect(await claim(scope, 'lease')).toEqual({ state: 'claimed' });
      expect(await claim(scope, 'done')).toEqual({ state: 'claimed' });
      expect(await claim(scope, 'unk')).toEqual({ state: 'claimed' });
      expect(await claim(scope, 'long')).toEqual({ state: 'completed', result: stored('kept') });
    });

    test('key_fields name what makes calls identical; key order never changes a key', async () => {
      const scope = fresh();
      const byTo = (args: unknown) => idempotencyKey(scope, 'send_email', args, ['/to', '/subject']);
      expect(await claim(scope, byTo({ to: 'a', subject: 's', body: 'one' }))).toEqual({ state: 'claimed' });
      expect(await claim(scope, byTo({ body: 'two', subject: 's', to: 'a' }))).toEqual({ state: 'in_progress' });
      expect(await claim(scope, byTo({ to: 'b', subject: 's', body: 'one' }))).toEqual({ state: 'claimed' });
      const all = (args: unknown) => idempotencyKey(scope, 'send_email', args, []);
      expect(await claim(scope, all({ a: 1, b: { c: [1, { d: 2, e: 3 }], f: null } }))).toEqual({ state: 'claimed' });
      expect(await claim(scope, all({ b: { f: null, c: [1, { e: 3, d: 2 }] }, a: 1 }))).toEqual({ state: 'in_progress' });
      expect(await claim(scope, all({ b: { f: null, c: [{ e: 3, d: 2 }, 1] }, a: 1 }))).toEqual({ state: 'claimed' });
    });

    test('tenants and sessions never share records, even with separators in their names', async () => {
      const tenant = `t-${randomUUID()}`;
      const scopes: SessionScope[] = [
        { tenant, sessionId: 's' },
        { tenant: `${tenant}:s`, sessionId: '' },
        { tenant: `${tenant}}`, sessionId: '{s' },
        { tenant, sessionId: 's:' },
        { tenant: '', sessionId: `${tenant}:s` },
      ];
      for (const scope of scopes) expect(await claim(scope, 'same-key')).toEqual({ state: 'claimed' });
      for (const scope of scopes) expect(await claim(scope, 'same-key')).toEqual({ state: 'in_progress' });
      for (const scope of scopes) await store.endSession(scope);
    });

    test('the loop window counts identical results per op; a different result is progress', async () => {
      const scope = fresh();
      const record = (op: string, resultHash: string, failed = false) => Promise.resolve(store.finishAttempt({ scope, op, record: { result: resultHash, failed, window: 100 } })).then((r) => r.streak);
      expect(await record('a', 'h1')).toEqual({ count: 1, failed: false });
      expect(await record('b', 'h1')).toEqual({ count: 1, failed: false });
      expect(await record('a', 'h1')).toEqual({ count: 2, failed: false });
      expect(await record('a', 'h1')).toEqual({ count: 3, failed: false });
      expect((await store.beginAttempt({ scope, op: 'a' })).streak).toEqual({ count: 3, failed: false });
      expect(await record('a', 'h2')).toEqual({ count: 1, failed: false });
      const failedTwice = { count: 2, failed: true, sinceMs: expect.any(Number) };
      expect(await record('c', 'e1', true)).toEqual({ count: 1, failed: true, sinceMs: expect.any(Number) });
      expect(await record('c', 'e1', true)).toEqual(failedTwice);
      expect((await store.beginAttempt({ scope, op: 'c', claim: { key: 'k', leaseMs: 1000 } })).streak).toEqual(failedTwice);
      expect((await store.finishAttempt({ scope, op: 'c' })).streak).toEqual(failedTwice);
    });

    test('the window keeps only its newest entries', async () => {
      const scope = fresh();
      let streak = { count: 0, failed: false };
      for (let i = 0; i < 5; i++) streak = (await store.finishAttempt({ scope, op: 'a', record: { result: 'h', failed: false, window: 3 } })).streak;
      expect(streak).toEqual({ count: 3, failed: false });
      await store.finishAttempt({ scope, op: 'b', record: { result: 'h', failed: false, window: 3 } });
      expect((await store.beginAttempt({ scope, op: 'a' })).streak).toEqual({ count: 2, failed: false });
    });

    test('every sequence of records yields the streaks of streakOf', async () => {
      // Short and long ops and results: the memory store keeps short ones as they are, long ones
      // (and those of exactly 32 characters) hashed; the Redis store hashes all.
      const long = (c: string) => `${'L'.repeat(300)}${c}`;
      // Some failures do not count (a call that waited as told): they neither add nor break.
      const entry = fc.record({ op: fc.constantFrom('a', 'b', `c\u0000${long('p')}`), hash: fc.constantFrom('h1', 'h2', 'x'.repeat(32), long('1'), long('2')), failed: fc.boolean(), counts: fc.constantFrom(true, true, false), told: fc.boolean() }).map((e) => ({ ...e, counts: e.counts || !e.failed, until: e.told ? 1 : 0 }));
      // Ages and waits are the store's clock's: compared by whether they are given.
      const bare = ({ count, failed, sinceMs, toldRun }: { count: number; failed: boolean; sinceMs?: number; toldRun?: number }) => ({ count, failed, aged: sinceMs !== undefined, toldRun });
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.array(entry, { maxLength: 14 }), fc.constantFrom('a', 'b', `c\u0000${long('p')}`), async (window, entries, probe) => {
          const scope = fresh();
          let model: WindowEntry[] = [];
          for (const e of entries) {
            const { streak } = await store.finishAttempt({ scope, op: e.op, record: { result: e.hash, failed: e.failed, window, ...(e.counts ? {} : { counts: false as const }), ...(e.told ? { waitMs: 60_000 } : {}) } });
            model = [...model, e].slice(-window);
            expect(bare(streak)).toEqual(bare(streakOf(model, e.op)));
          }
          expect(bare((await store.beginAttempt({ scope, op: probe })).streak)).toEqual(bare(streakOf(model, probe)));
          await store.endSession(scope);
        }),
        { numRuns: 25 },
      );
    });

    test('a spilled result is read back whole by its tenant only, until its TTL', async () => {
      const scope = fresh();
      const handle = newResultHandle(scope.sessionId);
      const shortLived = newResultHandle(scope.sessionId);
      const text = `${'x'.repeat(20_000)} 🚀 ünïcode`;
      await store.finishAttempt({ scope, op: OP, spill: { handle, text, ttlSeconds: 60 } });
      await store.finishAttempt({ scope, op: OP, spill: { handle: shortLived, text: 'brief', ttlSeconds: 1 } });
      expect(await store.readResult(scope.tenant, handle)).toBe(text);
      expect(await store.readResult(scope.tenant, shortLived)).toBe('brief');
      expect(await store.readResult(`${scope.tenant}-other`, handle)).toBeUndefined();
      expect(await store.readResult(scope.tenant, newResultHandle(scope.sessionId))).toBeUndefined();
      expect(await store.readResult(scope.tenant, 'not-a-handle')).toBeUndefined();
      await sleep(1100);
      expect(await store.readResult(scope.tenant, shortLived)).toBeUndefined();
      expect(await store.readResult(scope.tenant, handle)).toBe(text);
    });

    test('spilled results per session are capped, the oldest going first', async () => {
      const scope = fresh();
      const handles = [newResultHandle(scope.sessionId), newResultHandle(scope.sessionId), newResultHandle(scope.sessionId)];
      for (const [i, handle] of handles.entries()) {
        await capped.finishAttempt({ scope, op: OP, spill: { handle, text: `r${i}`, ttlSeconds: 60 } });
        await sleep(5);
      }
      expect(await Promise.all(handles.map((h) => capped.readResult(scope.tenant, h)))).toEqual([undefined, 'r1', 'r2']);
    });

    test('memory keeps the newest `max` entries, oldest first, each until its TTL', async () => {
      const scope = fresh();
      for (let i = 0; i < 5; i++) await store.finishAttempt({ scope, op: OP, memory: { entry: `tool=t; input=${i}; result=ok`, max: 3, ttlSeconds: 60 } });
      expect(await store.memory(scope)).toEqual(['tool=t; input=2; result=ok', 'tool=t; input=3; result=ok', 'tool=t; input=4; result=ok']);
      const brief = fresh();
      // 'old' lives 0.75 s, 'new' 1.5 s. Each read is judged by when it was made (a loaded CI machine
      // once stretched 600 ms of sleep and a step past a 1 s TTL): the last read, 0.9 s after 'old'
      // was written, comes 0.75 s before 'new' ends.
      const oldAt = Date.now();
      await store.finishAttempt({ scope: brief, op: OP, memory: { entry: 'old', max: 3, ttlSeconds: 0.75 } });
      await sleep(150);
      await store.finishAttempt({ scope: brief, op: OP, memory: { entry: 'new', max: 3, ttlSeconds: 1.5 } });
      const readAt = Date.now();
      const both = await store.memory(brief);
      if (readAt - oldAt < 600) expect(both).toEqual(['old', 'new']);
      else expect(both.slice(-1)).toEqual(['new']);
      await sleep(oldAt + 900 - Date.now());
      expect(await store.memory(brief)).toEqual(['new']);
      expect(await store.memory(fresh())).toEqual([]);
    });

    test('EndSession clears records, window, results and memory of that session only; a claim still running stays', async () => {
      const scope = fresh();
      const other = { tenant: scope.tenant, sessionId: `${scope.sessionId}-other` };
      const handle = newResultHandle(scope.sessionId);
      const otherHandle = newResultHandle(other.sessionId);
      for (const s of [scope, other]) {
        await claim(s, 'running');
        await claim(s, 'done');
        await store.finishAttempt({ scope: s, op: OP, record: { result: 'h', failed: false, window: 100 }, idempotency: { key: 'done', action: 'complete', result: stored('ok'), ttlSeconds: 60 }, spill: { handle: s === scope ? handle : otherHandle, text: 'spilled', ttlSeconds: 60 }, memory: { entry: 'm', max: 10, ttlSeconds: 60 } });
      }
      await store.endSession(scope);
      // Its tool may still be running: an identical call must not run it a second time.
      expect(await claim(scope, 'running')).toEqual({ state: 'in_progress' });
      expect(await claim(scope, 'done')).toEqual({ state: 'claimed' });
      expect((await store.beginAttempt({ scope, op: OP })).streak).toEqual({ count: 0, failed: false });
      expect(await store.readResult(scope.tenant, handle)).toBeUndefined();
      expect(await store.memory(scope)).toEqual([]);
      expect(await claim(other, 'running')).toEqual({ state: 'in_progress' });
      expect(await claim(other, 'done')).toEqual({ state: 'completed', result: stored('ok') });
      expect((await store.beginAttempt({ scope: other, op: OP })).streak).toEqual({ count: 1, failed: false });
      expect(await store.readResult(other.tenant, otherHandle)).toBe('spilled');
      expect(await store.memory(other)).toEqual(['m']);
      await expect(store.endSession(fresh())).resolves.toBeUndefined();
    });

    test("EndSession tells each session-end listener, once and before it resolves, which session ended (what a replica keeps of it beside the store, memoized results, goes with it)", async () => {
      const ending = await factory({});
      try {
        const heard: SessionScope[] = [];
        ending.onSessionEnd(() => {
          throw new Error('a listener that fails stops neither EndSession nor the others');
        });
        ending.onSessionEnd((scope) => void heard.push(scope));
        const scope = fresh();
        await ending.endSession(scope);
        expect(heard).toEqual([scope]);
        // A session the store holds nothing of ends too (its memoized results may be all there is).
        const unknown = fresh();
        await ending.endSession(unknown);
        expect(heard).toEqual([scope, unknown]);
        // A store that hears the ends announced by replicas does not take its own for another's.
        // (Only this test's sessions: on a shared Redis, an earlier test's announced end may
        // still arrive, a Cluster's pub/sub being slower; seen once in a clean-clone CI run.)
        await sleep(300);
        const ours = new Set([scope.tenant, unknown.tenant]);
        expect(heard.filter((s) => ours.has(s.tenant))).toEqual([scope, unknown]);
      } finally {
        await ending.close();
      }
    });

    if (traits.shared) {
      test("a session ended through one store is told to another's listeners sharing the state (another replica)", async () => {
        const [one, other] = await Promise.all([factory({}), factory({})]);
        try {
          const heard: SessionScope[] = [];
          other.onSessionEnd((scope) => void heard.push(scope));
          const scope = fresh();
          // Once subscribed: an end announced before is not heard.
          const deadline = Date.now() + 5_000;
          while (heard.length === 0 && Date.now() < deadline) {
            await one.endSession(scope);
            await sleep(100);
          }
          expect(heard[0]).toEqual(scope);
        } finally {
          await Promise.all([one.close(), other.close()]);
        }
      });
    }

    test("tenantErased tells each of this store's tenant-erasure listeners, before it resolves; one that fails stops neither it nor the others", async () => {
      const erasing = await factory({});
      try {
        const heard: string[] = [];
        erasing.onTenantErased(() => {
          throw new Error('a failing listener');
        });
        erasing.onTenantErased((tenant) => void heard.push(tenant));
        const { tenant } = fresh();
        await erasing.tenantErased(tenant);
        expect(heard).toEqual([tenant]);
        // Not heard a second time as another replica's.
        await sleep(300);
        expect(heard.filter((t) => t === tenant)).toEqual([tenant]);
      } finally {
        await erasing.close();
      }
    });

    if (traits.shared) {
      test("a tenant erased through one store is told to another's listeners sharing the state (another replica)", async () => {
        const [one, other] = await Promise.all([factory({}), factory({})]);
        try {
          const heard: string[] = [];
          other.onTenantErased((tenant) => void heard.push(tenant));
          const { tenant } = fresh();
          // Once subscribed: an erasure announced before is not heard.
          for (const deadline = Date.now() + 5_000; !heard.includes(tenant) && Date.now() < deadline; ) {
            await one.tenantErased(tenant);
            await sleep(100);
          }
          expect(heard[0]).toBe(tenant);
        } finally {
          await Promise.all([one.close(), other.close()]);
        }
      });
    }

    test('a claim EndSession left running is claimable again once its lease ends', async () => {
      const scope = fresh();
      expect(await claim(scope, 'brief', 300)).toEqual({ state: 'claimed' });
      await store.endSession(scope);
      expect(await claim(scope, 'brief', 300)).toEqual({ state: 'in_progress' });
      await sleep(400);
      expect(await claim(scope, 'brief', 300)).toEqual({ state: 'claimed' });
    });

    test('a session budget counts its calls up to its size, then refuses without counting or claiming; EndSession resets it', async () => {
      const scope = fresh();
      const other = { tenant: scope.tenant, sessionId: `${scope.sessionId}-other` };
      const mail = { id: 'send_*', max: 3 };
      const begin = (s: SessionScope, budget = mail, key?: string) => Promise.resolve(store.beginAttempt({ scope: s, op: OP, budget, claim: key ? { key, leaseMs: 10_000 } : undefined }));
      // Concurrent calls: exactly the budget's size get through.
      const first = await Promise.all(Array.from({ length: 5 }, () => begin(scope)));
      expect(first.filter((r) => r.overBudget)).toHaveLength(2);
      // Each counted call is told what is left after it.
      expect(first.filter((r) => !r.overBudget).map((r) => r.budgetLeft).sort()).toEqual([0, 1, 2]);
      // Past it, a side-effecting call takes no claim.
      const refused = await begin(scope, mail, 'late');
      expect(refused.overBudget).toBe(true);
      expect(refused.claim).toBeUndefined();
      expect(await claim(scope, 'late')).toEqual({ state: 'claimed' });
      // Another budget of the same session, and the same budget in another session, are apart.
      expect((await begin(scope, { id: 'search', max: 1 })).overBudget).toBeUndefined();
      expect((await begin(other)).overBudget).toBeUndefined();
      // A call without a budget is not counted or refused.
      expect((await store.beginAttempt({ scope, op: OP })).overBudget).toBeUndefined();
      await store.endSession(scope);
      expect((await begin(scope)).overBudget).toBeUndefined();
    });

    test('a call answered from its idempotency record runs nothing: it is neither counted against a budget nor refused by it', async () => {
      const scope = fresh();
      const one = { id: 'send_*', max: 1 };
      const begin = (key: string) => Promise.resolve(store.beginAttempt({ scope, op: OP, budget: one, claim: { key, leaseMs: 10_000 } }));
      const first = await begin('sent');
      expect(first.claim).toEqual({ state: 'claimed' });
      expect(first.budgetLeft).toBe(0);
      // An identical call while it runs: in progress, not counted.
      expect(await begin('sent')).toEqual({ streak: { count: 0, failed: false }, claim: { state: 'in_progress' } });
      await complete(scope, 'sent', stored('sent'));
      // The budget is spent, yet the identical call still gets its replay (a client's retry).
      const replay = await begin('sent');
      expect(replay.claim).toEqual({ state: 'completed', result: stored('sent') });
      expect(replay.overBudget).toBeUndefined();
      // A new call is refused.
      expect((await begin('another')).overBudget).toBe(true);
    });
  });
}
