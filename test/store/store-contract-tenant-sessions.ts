import { randomUUID } from 'node:crypto';
import { newResultHandle, type SessionScope, type Store } from '../../src/store';
import { OP, stored } from './contract-fixtures';
import type { StoreFactory } from './store-contract';

/** Every id `tenantSessions` hands out for `tenant`, in the order given, and the batches' sizes. */
async function walk(store: Store, tenant: string): Promise<{ ids: string[]; batches: number[] }> {
  const ids: string[] = [];
  const batches: number[] = [];
  for await (const batch of store.tenantSessions(tenant)) {
    ids.push(...batch);
    batches.push(batch.length);
  }
  return { ids, batches };
}

const sorted = (ids: readonly string[]) => [...ids].sort();

/**
 * The Store contract on finding a tenant's sessions (Store.tenantSessions, for EraseTenant): every
 * session holding anything, each once, none of another tenant's; none once ended, but a session
 * whose claim still runs (EndSession keeps it). Called inside describeStoreContract.
 */
export function describeTenantSessions(factory: StoreFactory): void {
  let store: Store;
  beforeAll(async () => {
    store = await factory({});
  });
  afterAll(async () => {
    await store?.close();
  });

  test("tenantSessions finds every session of the tenant holding anything, once each, and no other tenant's", async () => {
    const tenant = `erase-${randomUUID()}`;
    // A tenant whose name starts with the other's, and one the other's name starts with.
    const longer = `${tenant}x`;
    const shorter = tenant.slice(0, -1);
    const scope = (sessionId: string, name = tenant): SessionScope => ({ tenant: name, sessionId });
    const odd = 'a:{b}}\u{1F600} c';
    await store.beginAttempt({ scope: scope('record'), op: OP, claim: { key: 'k', leaseMs: 10_000 } });
    await store.finishAttempt({ scope: scope('record'), op: OP, idempotency: { key: 'k', action: 'complete', result: stored('sent'), ttlSeconds: 60 } });
    await store.finishAttempt({ scope: scope('window'), op: OP, record: { result: 'h', failed: false, window: 10 } });
    await store.finishAttempt({ scope: scope('memory'), op: OP, memory: { entry: 'tool=x', max: 5, ttlSeconds: 60 } });
    await store.finishAttempt({ scope: scope('spill'), op: OP, spill: { handle: newResultHandle('spill'), text: 'x'.repeat(100), ttlSeconds: 60 } });
    // Counted with a token: the call's mark outlives the session's end (its lease), and is no data
    // of the session's that ending it again would remove.
    await store.beginAttempt({ scope: scope('budget'), op: OP, budget: { id: 'send_*', max: 3, token: 'call-1', tokenLeaseMs: 60_000 } });
    await store.finishAttempt({ scope: scope(odd), op: OP, record: { result: 'h', failed: true, window: 10 } });
    await store.beginAttempt({ scope: scope('running'), op: OP, claim: { key: 'c', leaseMs: 30_000 } });
    for (const name of [longer, shorter]) await store.finishAttempt({ scope: scope('record', name), op: OP, record: { result: 'h', failed: false, window: 10 } });

    const found = await walk(store, tenant);
    expect(sorted(found.ids)).toEqual(sorted(['record', 'window', 'memory', 'spill', 'budget', odd, 'running']));
    expect((await walk(store, longer)).ids).toEqual(['record']);
    expect((await walk(store, shorter)).ids).toEqual(['record']);
    expect((await walk(store, `${tenant}-none`)).ids).toEqual([]);

    for (const sessionId of found.ids) await store.endSession(scope(sessionId));
    // Ended, a session holds nothing but its end mark (and a counted call's mark), and is not found
    // again; the claim still running is kept (so an identical call finds it), and its session with it.
    expect((await walk(store, tenant)).ids).toEqual(['running']);
    expect((await store.beginAttempt({ scope: scope('running'), op: OP, claim: { key: 'c', leaseMs: 30_000 } })).claim?.state).toBe('in_progress');
    expect((await walk(store, longer)).ids).toEqual(['record']);
  });

  test('tenantSessions hands out a tenant of 2,500 sessions in batches of at most 1,000, each session once', async () => {
    const tenant = `erase-many-${randomUUID()}`;
    const ids = Array.from({ length: 2500 }, (_, i) => `s${i}`);
    for (let i = 0; i < ids.length; i += 100) {
      await Promise.all(ids.slice(i, i + 100).map((sessionId) => store.finishAttempt({ scope: { tenant, sessionId }, op: OP, record: { result: 'h', failed: false, window: 10 }, memory: { entry: 'm', max: 5, ttlSeconds: 60 } })));
    }
    const found = await walk(store, tenant);
    expect(found.ids).toHaveLength(2500);
    expect(sorted(found.ids)).toEqual(sorted(ids));
    expect(found.batches.length).toBeGreaterThanOrEqual(3);
    // SCAN's COUNT is a hint: a batch may pass it a little, never by much.
    expect(Math.max(...found.batches)).toBeLessThanOrEqual(1500);
  });
}
